#!/usr/bin/env bash
# The local demo: a real API server on loopback, the example Widget CRD and widgets, and two
# nodehook agents acting as nodes node-a and node-b, each running config/hooks/widget-hook.
# A few scripted changes follow (update, create, delete); then it keeps running so you can make
# your own with the printed commands. Ctrl-C stops everything cleanly.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
demo=${NODEHOOK_DEMO_DIR:-/tmp/nodehook-demo}
cd "$repo"

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "installing what is missing"
test/install-deps.sh
step "building nodehook"
nodehook=$(test/build.sh | tail -n 1)
step "building the local API server (the first build takes several minutes; later runs reuse it)"
cluster_bin=$(test/cluster/build.sh | tail -n 1)

rm -rf "$demo"
mkdir -p "$demo"
pids=()
cleanup() {
  trap - INT TERM EXIT
  step "stopping"
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  for node in node-a node-b; do
    echo "-- what the hook recorded on $node ($demo/$node.log):"
    cat "$demo/$node.log" 2>/dev/null || echo "(nothing)"
  done
}
trap cleanup INT TERM EXIT

step "starting the API server on loopback"
coproc CLUSTER { exec "$cluster_bin" --dir "$demo/cluster" \
  --apply config/examples/widget-crd.yaml --apply config/examples/widgets.yaml 2>"$demo/cluster.log"; }
pids+=("$CLUSTER_PID")
kubeconfig=""
while read -r line <&"${CLUSTER[0]}"; do
  case "$line" in ready*) kubeconfig=$(sed -n 's/.*kubeconfig=\([^ ]*\).*/\1/p' <<<"$line"); break ;; esac
done
[ -n "$kubeconfig" ] || { echo "the API server did not start; see $demo/cluster.log" >&2; exit 1; }
echo "API server ready; kubeconfig: $kubeconfig"

# The example config points at /etc/nodehook/hooks, where the DaemonSet mounts the hooks ConfigMap.
sed "s|/etc/nodehook/hooks|$repo/config/hooks|g" config/example.json >"$demo/config.json"

port=8091
for node in node-a node-b; do
  step "starting the agent for $node (health and metrics on http://127.0.0.1:$port)"
  mkdir -p "$demo/$node"
  WIDGET_LOG="$demo/$node.log" "$nodehook" run --config "$demo/config.json" \
    --node-name "$node" --kubeconfig "$kubeconfig" --state-file "$demo/$node/state.db" \
    --health-address "127.0.0.1:$port" --admin-address "127.0.0.1:0" \
    > >(sed -u "s/^/[$node] /") 2> >(sed -u "s/^/[$node] /" >&2) &
  pids+=("$!")
  port=$((port + 1))
done

python3 test/demo_steps.py "$kubeconfig" "$demo"
step "running; Ctrl-C stops the agents and the API server"
cat <<MSG
Change widgets yourself, e.g.:
  python3 test/demo_steps.py $kubeconfig $demo patch alpha '{"size": 7}'
  python3 test/demo_steps.py $kubeconfig $demo create gamma '{"size": 1}'
  python3 test/demo_steps.py $kubeconfig $demo delete gamma
MSG
wait
