#!/usr/bin/env bash
# A cluster with real nodes on this one machine, for the real-node tests (README.md):
#   real-node.sh --dir DIR --nodes N [--image ARCHIVE]...
# The test API server (nodehook-testcluster) plus kube-controller-manager, kube-scheduler and N
# kubelets (nodehook-k8s-node, the same k8s.io release), each kubelet with its own containerd in
# its own network, mount, PID, UTS and IPC namespaces (real-node-init.sh), as kind gives each node
# a container. Each ARCHIVE (an OCI or Docker image tarball, e.g. test/image/build-image.sh's) is
# imported into every node's containerd. Prints `ready kubeconfig=PATH` once every Node is Ready;
# SIGTERM or SIGINT stops everything and removes what it made (processes, namespaces, links,
# cgroups). Needs root. Progress on stderr, logs under DIR.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
usage() { echo "usage: real-node.sh --dir DIR --nodes N [--image ARCHIVE]..." >&2; exit 2; }
log() { echo "real-node.sh: $*" >&2; }

dir="" nodes=0 images=()
while (($#)); do
	case "$1" in
	--dir) dir=${2:?}; shift 2 ;;
	--nodes) nodes=${2:?}; shift 2 ;;
	--image) images+=("$(realpath "${2:?}")"); shift 2 ;;
	*) usage ;;
	esac
done
[[ -n $dir && $nodes =~ ^[1-9][0-9]?$ ]] || usage
for f in "${images[@]}"; do [[ -f $f ]] || { log "--image $f: no such file"; exit 2; }; done
[[ $(id -u) == 0 ]] || { log "needs root (namespaces, mounts, cgroups)"; exit 1; }
for tool in containerd containerd-shim-runc-v2 runc ctr ip iptables nsenter unshare openssl /usr/lib/cni/bridge; do
	command -v "$tool" >/dev/null || { log "$tool is missing (test/install-deps.sh installs it)"; exit 1; }
done
mkdir -p "$dir"
dir="$(realpath "$dir")"

export NODEHOOK_CACHE_DIR="${NODEHOOK_CACHE_DIR:-$repo/build/cache}"
apiserver_bin="$("$here/build.sh" testcluster | tail -n1)"
node_bin="$("$here/build.sh" nodes | tail -n1)"
kubectl_bin="$("$here/build.sh" kubectl | tail -n1)"
pause_line="$("$repo/test/image/build-image.sh" pause | tail -n1)"
pause_image="$(sed -E 's/^image=([^ ]+) .*/\1/' <<<"$pause_line")"
images+=("${pause_line##*archive=}")

# The nodes' subnet: 10.250.K.0/24 on bridge nhrnK (K in 200-254, the first one free; the fleet
# test's 10.250.N.x stay far below). The bridge's .1 is the API server's second address.
exec 8>/run/nodehook-real-node.lock
flock 8
for ((k = 200; k <= 254; k++)); do
	ip link show "nhrn$k" >/dev/null 2>&1 || break
done
((k <= 254)) || { log "no free 10.250.K.0/24 (bridges nhrn200-254 all exist)"; exit 1; }
net="10.250.$k" bridge="nhrn$k" cg_prefix="nhrn$k"

pids=() node_inits=()
declare -A node_wrapper  # node number -> the unshare that runs its PID 1
cleanup() {
	trap - EXIT TERM INT
	log "stopping"
	for p in "${node_inits[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	for p in "${node_inits[@]}"; do
		for ((t = 0; t < 300; t++)); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$p" 2>/dev/null || true
	done
	for p in "${node_wrapper[@]}"; do wait "$p" 2>/dev/null || true; done
	for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
		kill -TERM "${pids[i]}" 2>/dev/null || true
		wait "${pids[i]}" 2>/dev/null || true
	done
	for ((i = 1; i <= nodes; i++)); do ip netns del "$bridge-n$i" 2>/dev/null || true; done
	ip link del "$bridge" 2>/dev/null || true
	# Killed processes leave their cgroups a moment later: retry the removal for a few seconds.
	for ((t = 0; t < 50; t++)); do
		left=0
		for h in /sys/fs/cgroup/*/; do
			while read -r d; do rmdir "$d" 2>/dev/null || left=1; done < <(find "$h" -maxdepth 1 -name "$cg_prefix-*" -type d -exec find {} -depth -type d \;)
		done
		((left == 0)) && break
		sleep 0.1
	done
	((left == 0)) || log "cgroups $cg_prefix-* could not all be removed"
	rm -f "$dir/ready"
	log "stopped"
}
trap cleanup EXIT
trap 'exit 0' TERM INT

ip link add "$bridge" type bridge
ip addr add "$net.1/24" dev "$bridge"
ip link set "$bridge" up
flock -u 8

log "starting the API server (log in $dir/apiserver)"
mkfifo "$dir/apiserver.out" 2>/dev/null || true
"$apiserver_bin" --dir "$dir/apiserver" --also-listen "$net.1" --with-controller-manager >"$dir/apiserver.out" 2>>"$dir/apiserver.err" &
pids+=($!)
read -r line <"$dir/apiserver.out" || { log "the API server failed, see $dir/apiserver.err"; exit 1; }
kubeconfig="$dir/apiserver/kubeconfig"
pki="$dir/apiserver/pki"
api_port="$(cat "$dir/apiserver/port")"

"$node_bin" controller-manager --kubeconfig "$kubeconfig" --leader-elect=false --secure-port=0 \
	--service-account-private-key-file "$pki/sa.key" --root-ca-file "$pki/ca.crt" \
	--use-service-account-credentials=false --v=1 >"$dir/controller-manager.log" 2>&1 &
pids+=($!)
"$node_bin" scheduler --kubeconfig "$kubeconfig" --leader-elect=false --secure-port=0 \
	--v=1 >"$dir/scheduler.log" 2>&1 &
pids+=($!)

# Starts node I: its PID 1 (real-node-init.sh) in the node's network namespace and fresh mount,
# PID, UTS and IPC namespaces, on a new boot ID (NODE_DIR/boot_id, which the node's /proc shows:
# a reboot is the node stopped and started again, as `touch NODE_DIR/reboot` and a SIGTERM to its
# PID 1 ask for). Records its PID 1 in NODE_DIR/pid, and the wrapper's PID.
start_node() {
	local i=$1 node_dir="$dir/nodes/node-$i" ns="$bridge-n$i" init=""
	cat /proc/sys/kernel/random/uuid >"$node_dir/boot_id.new" && mv "$node_dir/boot_id.new" "$node_dir/boot_id"
	nsenter --net="/run/netns/$ns" unshare --mount --propagation slave --pid --fork --mount-proc --uts --ipc \
		--kill-child -- "$here/real-node-init.sh" "$node_dir" 2>>"$node_dir/init.log" &
	node_wrapper[$i]=$!
	# The node's PID 1 is the unshare's child; SIGTERM to it stops the node (a lost node).
	for ((t = 0; t < 100; t++)); do
		init="$(pgrep -P "${node_wrapper[$i]}" || true)"
		[[ -n $init ]] && break
		sleep 0.05
	done
	[[ -n $init ]] || { log "node-$i did not start, see $node_dir/init.log"; exit 1; }
	# Renamed into place: a reader never sees the file empty or half written.
	echo "$init" >"$node_dir/pid.new" && mv "$node_dir/pid.new" "$node_dir/pid"
	node_inits[i - 1]=$init
}

for ((i = 1; i <= nodes; i++)); do
	name="node-$i" node_dir="$dir/nodes/node-$i" ns="$bridge-n$i" ip="$net.$((10 + i))"
	mkdir -p "$node_dir"
	"$here/real-node-config.sh" "$node_dir" "$name" "$ip" "$pki" "$cg_prefix-$name" "$pause_image" "$k" "$i"
	cat >"$node_dir/env" <<-EOF
		NODE_NAME=$name
		NODE_IP=$ip
		APISERVER_IP=$net.1
		APISERVER_PORT=$api_port
		NODE_BIN=$node_bin
		IMAGES="${images[*]}"
	EOF
	ip netns add "$ns"
	ip link add "$bridge-$i" type veth peer name eth0 netns "$ns"
	ip link set "$bridge-$i" master "$bridge" up
	ip -n "$ns" link set lo up
	ip -n "$ns" addr add "$ip/24" dev eth0
	ip -n "$ns" link set eth0 up
	ip -n "$ns" route add default via "$net.1"
	start_node "$i"
done

log "waiting for $nodes Ready node(s)"
for ((t = 0; ; t++)); do
	ready="$("$kubectl_bin" --kubeconfig "$kubeconfig" get nodes \
		-o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' 2>/dev/null |
		grep -c True || true)"
	((ready == nodes)) && break
	((t < 1800)) || { log "nodes not Ready after 180s, see $dir/nodes/*/kubelet.log"; exit 1; }
	for p in "${pids[@]}" "${node_wrapper[@]}"; do
		kill -0 "$p" 2>/dev/null || { log "a component exited early, see the logs in $dir"; exit 1; }
	done
	sleep 0.1
done
touch "$dir/ready"
echo "ready kubeconfig=$kubeconfig"
# Until a signal: `wait` returns early only when a component exits, which ends the cluster, or a
# node stops: a node asked to reboot (NODE_DIR/reboot) starts again, with its /run emptied (a
# tmpfs on a real node) and a new boot ID; any other node stays down (a lost node).
while true; do
	live=()
	for p in "${node_wrapper[@]}"; do kill -0 "$p" 2>/dev/null && live+=("$p"); done
	wait -n "${pids[@]}" "${live[@]}" || true
	for p in "${pids[@]:0:3}"; do
		kill -0 "$p" 2>/dev/null || { log "a control-plane process exited, see the logs in $dir"; exit 1; }
	done
	for ((i = 1; i <= nodes; i++)); do
		node_dir="$dir/nodes/node-$i"
		kill -0 "${node_wrapper[$i]}" 2>/dev/null && continue
		[[ -e $node_dir/reboot ]] || continue
		rm -f "$node_dir/reboot"
		find "$node_dir/run" -mindepth 1 -delete 2>/dev/null || true
		log "node-$i rebooting"
		start_node "$i"
		echo "$(date +%s.%N)" >"$node_dir/rebooted"
	done
done
