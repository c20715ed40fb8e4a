#!/usr/bin/env bash
# Runs every test: installs what is missing, builds, runs the Catch2 unit and fault-injection
# tests (ctest), builds the local API server once (cached), then the end-to-end tests (pytest).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"

test/install-deps.sh
echo "== build"
nodehook_bin=$(test/build.sh | tail -n 1)
echo "== unit tests"
(cd "${NODEHOOK_BUILD_DIR:-$repo/build}" && ctest --output-on-failure -j 2)
echo "== local API server"
cluster_bin=$(test/cluster/build.sh | tail -n 1)
echo "== kubectl (renders deploy/, dry-runs it against the local API server)"
kubectl_bin=$(test/cluster/build.sh kubectl | tail -n 1)
echo "== end-to-end tests"
NODEHOOK_BIN="$nodehook_bin" NODEHOOK_TESTCLUSTER="$cluster_bin" NODEHOOK_KUBECTL="$kubectl_bin" \
  python3 -m pytest test/e2e -v -p no:cacheprovider "$@"
