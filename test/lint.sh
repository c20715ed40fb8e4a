#!/usr/bin/env bash
# Static analysis: clang-tidy over every .cc file of ours (agent/, storage/, test/, with the
# headers they include from there), configured by the top-level .clang-tidy, which also says why
# each excluded check is excluded. Compiles with clang's -Wthread-safety (GUARDED_BY). Fails on any
# finding. Needs only a configured build directory (build-lint; nothing is compiled). A file clean
# in an earlier run with the same inputs is not checked again (test/lint_cached.py says what counts).
#   test/lint.sh [FILE_REGEX]    e.g. test/lint.sh 'agent/reconcile/.*'
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
build=${NODEHOOK_LINT_BUILD_DIR:-$repo/build-lint}

cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
  -DNODEHOOK_FUZZ=ON -DNODEHOOK_CCACHE=OFF >/dev/null
# Each file's clean result is cached outside the checkout, keyed by the file, the project headers
# it includes, its compile command, the .clang-tidy files and the tool (test/lint_cached.py), so a
# run checks only what changed since a clean run; a file with findings is checked every time.
if python3 "$repo/test/lint_cached.py" --repo "$repo" --build "$build" --jobs "${NODEHOOK_JOBS:-2}" \
     --log "$build/lint.log" "$repo/${1:-(agent|storage|test)/.*\.cc$}"; then
  echo "lint: clean"
else
  sed 's/\x1b\[[0-9;]*m//g' "$build/lint.log" >"$build/lint.txt"
  grep -E '(warning|error):' "$build/lint.txt" | sort -u >&2 || cat "$build/lint.txt" >&2
  echo "lint: findings above (full output: $build/lint.txt)" >&2
  exit 1
fi
