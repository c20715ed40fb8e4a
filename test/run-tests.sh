#!/usr/bin/env bash
# Runs every test: installs what is missing, builds, runs the Catch2 unit and fault-injection
# tests (ctest); the unit tests again under ASan+UBSan with every fuzz seed corpus replayed, and
# the agent, storage and faults tests under TSan (test/sanitize.sh); clang-tidy (test/lint.sh, in the
# background beside the phases that follow, at the lowest priority); builds the local
# API server once (cached), the image and the real-node binaries (cached), then the end-to-end
# tests (pytest, the real-node suite included); last, the smoke runs of the
# fleet simulation (5 agents on one API server), of the fleet rollout cost (5 agents, 2 gated
# objects), of the fleet at start and at rest (5 agents) and of the nodehook vs kopf benchmark (test/bench/compare.sh --smoke); they fail only
# when something is broken, never on timing.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"

# Each phase's wall time, printed as a table when the run ends (passed or not).
phase_names=() phase_secs=() phase_start=$SECONDS
phase() {
  if ((${#phase_names[@]})); then phase_secs+=($((SECONDS - phase_start))); fi
  phase_names+=("$1") phase_start=$SECONDS
  echo "== $1"
}
phase_table() {
  phase_secs+=($((SECONDS - phase_start)))
  echo "== phase times (s)"
  for i in "${!phase_names[@]}"; do printf '%6d  %s\n' "${phase_secs[$i]}" "${phase_names[$i]}"; done
  printf '%6d  total\n' "$SECONDS"
}
# clang-tidy runs in the background, at the lowest priority, beside the phases that mostly wait
# (downloads, the image build, the end-to-end tests): on a fresh machine it checks every file, about
# 20 minutes of CPU. Its result is collected before the smoke runs; a run that stops early stops it
# (setsid: the whole group). setsid also starts a new autogroup, and nice counts only within one:
# the autogroup itself is set to nice 19, or clang-tidy would take as much CPU as all the tests.
lint_pid=
on_exit() {
  if [[ -n $lint_pid ]]; then kill -- "-$lint_pid" 2>/dev/null || true; fi
  phase_table
}
trap on_exit EXIT

phase "packages"
test/install-deps.sh
phase "build"
nodehook_bin=$(test/build.sh | tail -n 1)
phase "unit tests"
(cd "${NODEHOOK_BUILD_DIR:-$repo/build}" && ctest --output-on-failure -j 2)
phase "unit tests and fuzz corpora under ASan+UBSan"
test/sanitize.sh asan
phase "agent, storage and faults tests under TSan"
test/sanitize.sh tsan
phase "static analysis (clang-tidy), started in the background"
lint_log=$(mktemp) lint_start=$SECONDS
setsid bash -c '{ echo 19 >/proc/self/autogroup; } 2>/dev/null; exec nice -n 19 test/lint.sh' >"$lint_log" 2>&1 &
lint_pid=$!
phase "local API server"
cluster_bin=$(test/cluster/build.sh | tail -n 1)
phase "kubectl (renders deploy/, dry-runs it against the local API server)"
kubectl_bin=$(test/cluster/build.sh kubectl | tail -n 1)
phase "helm (lints and renders deploy/helm/nodehook; built after kubectl, whose packages it shares; cached)"
helm_bin=$(test/cluster/build.sh helm | tail -n 1)
phase "real nodes: the image from the Dockerfile, the pod sandbox image, kubelet + controller-manager + scheduler"
echo "   (each cached; the tests in test/e2e/real_nodes/ run them on test/cluster/real-node.sh's two nodes)"
test/image/build-image.sh | tail -n 1
test/image/build-image.sh pause | tail -n 1
k8s_node_bin=$(test/cluster/build.sh nodes | tail -n 1)
echo "$k8s_node_bin"
phase "end-to-end tests"
NODEHOOK_BIN="$nodehook_bin" NODEHOOK_TESTCLUSTER="$cluster_bin" NODEHOOK_KUBECTL="$kubectl_bin" \
  NODEHOOK_HELM="$helm_bin" NODEHOOK_K8S_NODE="$k8s_node_bin" python3 -m pytest test/e2e -v -p no:cacheprovider "$@"
phase "static analysis (clang-tidy), its result"
lint_rc=0
wait "$lint_pid" || lint_rc=$?
lint_pid=
cat "$lint_log"
echo "   clang-tidy result collected $((SECONDS - lint_start)) s after it started (its own time: the lint line above)"
if ((lint_rc != 0)); then exit "$lint_rc"; fi
phase "fleet simulation, smoke (test/bench/fleet_sim.py --smoke)"
NODEHOOK_BIN="$nodehook_bin" NODEHOOK_TESTCLUSTER="$cluster_bin" test/bench/fleet_sim.py --smoke
phase "fleet rollout cost, smoke (test/bench/fleet_rollout.py --smoke)"
NODEHOOK_BIN="$nodehook_bin" NODEHOOK_TESTCLUSTER="$cluster_bin" test/bench/fleet_rollout.py --smoke
phase "the fleet at start and at rest, smoke (test/bench/fleet_start_rest.py --smoke)"
NODEHOOK_BIN="$nodehook_bin" NODEHOOK_TESTCLUSTER="$cluster_bin" test/bench/fleet_start_rest.py --smoke
phase "nodehook vs kopf benchmark, smoke (kopf in a venv under the build directory)"
NODEHOOK_BIN="$nodehook_bin" NODEHOOK_TESTCLUSTER="$cluster_bin" test/bench/compare.sh --smoke
