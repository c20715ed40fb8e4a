#!/usr/bin/env bash
# Installs what building and testing nodehook needs, from Debian's packages (and pytest from
# PyPI when no Python has it). Safe to run again: it installs only what is missing.
# Go (for the local API server in test/cluster) must already be on the machine, 1.24 or newer.
set -euo pipefail

packages=(build-essential cmake ninja-build ccache pkg-config libssl-dev
          libcpprest-dev rapidjson-dev libsqlite3-dev libcli11-dev libyaml-cpp-dev libjemalloc-dev catch2 sqlite3 python3
          python3-yaml python3-jsonschema python3-prometheus-client python3-venv debootstrap tini
          iproute2 clang clang-tidy libclang-rt-14-dev
          buildah containerd runc containernetworking-plugins iptables openssl procps tzdata)  # tzdata: the time zones of rollout windows (test/agent/calendar, test/agent/rollout); buildah..procps: the real-node tests (test/image/build-image.sh builds the image, test/cluster/real-node.sh runs kubelets on containerd + runc + CNI); python3-jsonschema validates the shipped configs (test_config_schema.py); the deploy/ and image tests (test/e2e/test_deploy.py, test_image.py); tini for the PID 1 test; the metrics parser (test_metrics.py); iproute2 for the fleet test's pod addresses; python3-venv for the kopf benchmark's venv (test/bench/compare.sh); clang, clang-tidy, libclang-rt-14-dev: sanitizer builds, libFuzzer and clang-tidy
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  # A first install fetches a few hundred packages (clang, buildah, ...): one line per package
  # fetched and set up, so a long install shows that it moves.
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -q "${missing[@]}" |
    awk '/^Get:/ { print "install-deps: fetched " $5; fflush() } /^Setting up / { print "install-deps: set up " $3; fflush() }'
fi

if ! python3 -c 'import pytest' 2>/dev/null; then
  echo "install-deps: installing pytest"
  python3 -m pip install -q pytest 2>/dev/null || {
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-pytest >/dev/null
  }
fi

# test_metrics.py parses /metrics with the reference Prometheus text parser.
if ! python3 -c 'import prometheus_client' 2>/dev/null; then
  echo "install-deps: installing prometheus-client"
  python3 -m pip install -q prometheus-client 2>/dev/null || {
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-prometheus-client >/dev/null
  }
fi

if ! command -v go >/dev/null 2>&1; then
  echo "install-deps: Go is not installed; the local API server (test/cluster) needs Go 1.24 or newer" >&2
  exit 1
fi
echo "install-deps: all present"
