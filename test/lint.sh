#!/usr/bin/env bash
# Static analysis: clang-tidy over every .cc file of ours (agent/, storage/, test/, with the
# headers they include from there), configured by the top-level .clang-tidy, which also says why
# each excluded check is excluded. Compiles with clang's -Wthread-safety (GUARDED_BY). Fails on any
# finding. Needs only a configured build directory (build-lint; nothing is compiled).
#   test/lint.sh [FILE_REGEX]    e.g. test/lint.sh 'agent/reconcile/.*'
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
build=${NODEHOOK_LINT_BUILD_DIR:-$repo/build-lint}

cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
  -DNODEHOOK_FUZZ=ON -DNODEHOOK_CCACHE=OFF >/dev/null
tidy=$(command -v run-clang-tidy || command -v run-clang-tidy-14)
if "$tidy" -p "$build" -j "${NODEHOOK_JOBS:-2}" -quiet "$repo/${1:-(agent|storage|test)/.*\.cc$}" \
     >"$build/lint.log" 2>&1; then
  echo "lint: clean"
else
  sed 's/\x1b\[[0-9;]*m//g' "$build/lint.log" >"$build/lint.txt"  # run-clang-tidy forces colour
  grep -E '(warning|error):' "$build/lint.txt" | sort -u >&2 || cat "$build/lint.txt" >&2
  echo "lint: findings above (full output: $build/lint.txt)" >&2
  exit 1
fi
