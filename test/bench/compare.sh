#!/usr/bin/env bash
# nodehook vs kopf, side by side on one local API server (test/bench/compare.py).
#   test/bench/compare.sh           full run (~15 min): writes docs/benchmarks.md's section
#                                   "nodehook vs kopf (issue 11)" and docs/img/kopf-compare-*.svg
#   test/bench/compare.sh --smoke   tiny counts (~2 min): checks both systems handled every change
#                                   and the report was produced, in a temporary directory
#   test/bench/compare.sh --from-results build/bench-compare/results.json
#                                   writes the report again from an earlier run, measuring nothing
# kopf and matplotlib live in a venv under the build directory (bench only), made on first use.
# Uses NODEHOOK_BIN and NODEHOOK_TESTCLUSTER when set (as test/run-tests.sh sets them); otherwise
# the build directory's nodehook and the cached API server (built if missing).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
build=${NODEHOOK_BUILD_DIR:-$repo/build}
venv=$build/bench-venv
requirements="kopf==1.45.2 matplotlib"

if [ "$(cat "$venv/requirements" 2>/dev/null)" != "$requirements" ]; then
  echo "compare: making $venv ($requirements)" >&2
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q $requirements
  echo "$requirements" >"$venv/requirements"
fi
export NODEHOOK_BIN=${NODEHOOK_BIN:-$build/agent/app/nodehook}
# The backlog drain is set against how fast one core can start the hook at all (built with the tests).
export NODEHOOK_SPAWN_CEILING=${NODEHOOK_SPAWN_CEILING:-$build/test/bench/spawn_ceiling}
export NODEHOOK_TESTCLUSTER=${NODEHOOK_TESTCLUSTER:-$("$repo/test/cluster/build.sh" | tail -n 1)}
[ -x "$NODEHOOK_BIN" ] || { echo "compare: $NODEHOOK_BIN is missing: build first (test/build.sh)" >&2; exit 2; }
exec "$venv/bin/python" "$repo/test/bench/compare.py" "$@"
