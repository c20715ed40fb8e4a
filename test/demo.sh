#!/usr/bin/env bash
# The local demo: a real API server on loopback, the example Widget CRD and widgets, and two
# nodehook agents acting as nodes node-a and node-b, each running config/hooks/widget-hook.
# It walks through what nodehook does, printing each kubectl command it runs (test/demo_steps.py):
# create and update hooks, the fleet view (`kubectl nodehook`, as root), a failing hook's Warning
# Event and its recovery, an agent killed and catching up, node outputs (each node's WidgetsReady
# condition, a label a hook publishes on the nodes), a multi-step delete. Then it keeps
# running so you can try your own; Ctrl-C stops everything cleanly.
#   test/demo.sh [--non-interactive]   (--non-interactive: stop after the walkthrough; a test runs it)
# $NODEHOOK_BIN, $NODEHOOK_TESTCLUSTER and $NODEHOOK_KUBECTL skip building those.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
demo=${NODEHOOK_DEMO_DIR:-/tmp/nodehook-demo}
interactive=(); [[ ${1:-} == --non-interactive ]] && interactive=(--non-interactive)
cd "$repo"

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

if [[ -z ${NODEHOOK_BIN:-} || -z ${NODEHOOK_TESTCLUSTER:-} || -z ${NODEHOOK_KUBECTL:-} ]]; then
  step "a first run on a fresh machine takes about 15 minutes on 2 cores (Debian packages, the agent, ~600 MB of Go modules and the API server); later runs start within a minute"
  step "installing what is missing"
  test/install-deps.sh
fi
# Only the agent: the unit tests are test/run-tests.sh's business. ninja counts "[N/M]" on stderr.
step "building nodehook"
nodehook=${NODEHOOK_BIN:-$(test/build.sh nodehook | tail -n 1)}
step "building the local API server and kubectl (the first build takes several minutes; later runs reuse them)"
cluster_bin=${NODEHOOK_TESTCLUSTER:-$(test/cluster/build.sh | tail -n 1)}
kubectl_bin=${NODEHOOK_KUBECTL:-$(test/cluster/build.sh kubectl | tail -n 1)}

rm -rf "$demo"
mkdir -p -m 0700 "$demo"
# kubectl, and nodehook as the kubectl plugin (`kubectl nodehook` runs kubectl-nodehook on PATH).
mkdir -p "$demo/bin"
ln -s "$kubectl_bin" "$demo/bin/kubectl"
ln -s "$nodehook" "$demo/bin/kubectl-nodehook"

cluster_pid=""
cleanup() {
  trap - INT TERM EXIT
  step "stopping"
  [[ -n $cluster_pid ]] && kill -TERM "$cluster_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  for node in node-a node-b; do
    echo "-- what the hook recorded on $node ($demo/$node.log):"
    cat "$demo/$node.log" 2>/dev/null || echo "(nothing)"
  done
}
trap cleanup INT TERM EXIT

step "starting the API server on loopback"
# In a session of its own: Ctrl-C reaches the agents' driver first, and the API server is stopped
# only after the agents (else they would log its absence while stopping).
coproc CLUSTER { exec setsid -w "$cluster_bin" --dir "$demo/cluster" \
  --apply config/examples/widget-crd.yaml --apply config/examples/widgets.yaml 2>"$demo/cluster.log"; }
cluster_pid=$CLUSTER_PID
kubeconfig=""
while read -r line <&"${CLUSTER[0]}"; do
  case "$line" in ready*) kubeconfig=$(sed -n 's/.*kubeconfig=\([^ ]*\).*/\1/p' <<<"$line"); break ;; esac
done
[ -n "$kubeconfig" ] || { echo "the API server did not start; see $demo/cluster.log" >&2; exit 1; }
echo "API server ready; kubeconfig: $kubeconfig"

# The example config points at /etc/nodehook/hooks, where the DaemonSet mounts the hooks ConfigMap.
# Without its resume hook (which runs for every object at each start, on purpose), so that what an
# agent runs after a restart is only what it missed.
sed "s|/etc/nodehook/hooks|$repo/config/hooks|g" config/example.json |
  python3 -c 'import json, sys; c = json.load(sys.stdin); del c["resources"][0]["hooks"]["resume"]; c["resources"][0]["node_outputs"] = {"condition": "WidgetsReady", "prefixes": ["widgets.example.com/"]}; c["resources"][0]["ready_condition"] = "Ready"; c["tuning"]["cross_node_writes"] = "steward"; c["tuning"]["lease_namespace"] = "nodehook"; print(json.dumps(c, indent=2))' \
  >"$demo/config.json"

python3 test/demo_steps.py --kubeconfig "$kubeconfig" --demo "$demo" --nodehook "$nodehook" --bin "$demo/bin" \
  "${interactive[@]}"
