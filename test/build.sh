#!/usr/bin/env bash
# Builds nodehook and its unit tests into build/ (or $NODEHOOK_BUILD_DIR). The Dockerfile runs
# the same configure and build steps; this script is how CI proves they work.
#   test/build.sh [TARGET...]   only those ninja targets (the demo builds just `nodehook`)
# Progress ("[N/M] Building ...", one line per compiled file) goes to stderr; the last line on
# stdout is the agent's path.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
build=${NODEHOOK_BUILD_DIR:-$repo/build}

cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C "$build" -j "${NODEHOOK_JOBS:-2}" "$@" >&2
echo "$build/agent/app/nodehook"
