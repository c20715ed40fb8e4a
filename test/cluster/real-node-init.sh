#!/usr/bin/env bash
# PID 1 of one node of test/cluster/real-node.sh, which starts it in the node's own network
# namespace and fresh mount, PID, UTS and IPC namespaces:
#   real-node-init.sh NODE_DIR
# NODE_DIR/env names the node (NODE_NAME, NODE_IP, APISERVER_IP, APISERVER_PORT, NODE_BIN,
# IMAGES); NODE_DIR holds the configs real-node.sh wrote (containerd.toml, kubelet.yaml,
# kubeconfig). It gives the node its own /var/lib, /run and /var/log (bind mounts of NODE_DIR's
# var-lib, run and var-log: the hostPath directories of its pods live there), makes the
# in-cluster API address 10.0.0.1:443 lead to the API server (what kube-proxy would do for the
# `kubernetes` Service), starts containerd, imports the images, then runs the kubelet.
# SIGTERM stops the kubelet and containerd; when this process exits, the kernel kills whatever
# is left in the node's PID namespace (shims, pods) and drops its mounts with the namespace.
set -euo pipefail
node_dir=$1
# shellcheck source=/dev/null
source "$node_dir/env"

log() { echo "node $NODE_NAME: $*" >&2; }
hostname "$NODE_NAME"

# Mounts made here stay here (the namespace is a slave of the host's); inside it they are
# shared, so the kubelet's and containerd's mounts reach the containers as on a real node.
mount --make-rshared /
for d in var-lib run var-log; do
	mkdir -p "$node_dir/$d"
done
mount --bind "$node_dir/var-lib" /var/lib
mount --bind "$node_dir/run" /run
mount --bind "$node_dir/var-log" /var/log
# This boot's ID (real-node.sh draws one at each start): what the kubelet reports as the Node's
# bootID, and what pods that mount the path see. The kernel's own is one for every node here.
mount --bind "$node_dir/boot_id" /proc/sys/kernel/random/boot_id
mkdir -p /run/containerd /var/lib/kubelet

iptables -t nat -A OUTPUT -d 10.0.0.1/32 -p tcp --dport 443 \
	-j DNAT --to-destination "$APISERVER_IP:$APISERVER_PORT"
# The same for pods on the pod network (no hostNetwork), as on a real cluster: their packets
# arrive on cni0 (PREROUTING) and leave through eth0 with the node's address, so the API
# server's replies find their way back.
iptables -t nat -A PREROUTING -d 10.0.0.1/32 -p tcp --dport 443 \
	-j DNAT --to-destination "$APISERVER_IP:$APISERVER_PORT"
iptables -t nat -A POSTROUTING -s 10.251.0.0/16 -o eth0 -j MASQUERADE
echo 1 >/proc/sys/net/ipv4/ip_forward  # this network namespace's own setting

pids=()
stop() {
	trap - TERM INT
	log "stopping"
	# The kubelet first, so it does not restart what containerd is stopping.
	for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
		kill -TERM "${pids[i]}" 2>/dev/null || true
		wait "${pids[i]}" 2>/dev/null || true
	done
	exit 0
}
trap stop TERM INT

containerd --config "$node_dir/containerd.toml" >>"$node_dir/containerd.log" 2>&1 &
pids+=($!)
sock=/run/containerd/containerd.sock
for ((try = 0; try < 300; try++)); do
	ctr --address "$sock" version >/dev/null 2>&1 && break
	kill -0 "${pids[0]}" 2>/dev/null || { log "containerd exited, see $node_dir/containerd.log"; exit 1; }
	sleep 0.1
done
for archive in $IMAGES; do
	ctr --address "$sock" -n k8s.io images import "$archive" >>"$node_dir/containerd.log" 2>&1 ||
		{ log "importing $archive failed, see $node_dir/containerd.log"; exit 1; }
done

"$NODE_BIN" kubelet --config "$node_dir/kubelet.yaml" --kubeconfig "$node_dir/kubeconfig" \
	--hostname-override "$NODE_NAME" --node-ip "$NODE_IP" --root-dir /var/lib/kubelet \
	--cert-dir /var/lib/kubelet/pki --v=1 >>"$node_dir/kubelet.log" 2>&1 &
pids+=($!)
log "kubelet started"
# As PID 1 this shell also reaps the orphans reparented to it; `wait -n` returns when the
# kubelet or containerd exits (then the node is broken: stop it) or a signal runs stop.
while true; do
	wait -n "${pids[@]}" || true
	for p in "${pids[@]}"; do
		kill -0 "$p" 2>/dev/null || { log "a node process (pid $p) exited, see $node_dir/*.log"; stop; }
	done
done
