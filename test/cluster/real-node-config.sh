#!/usr/bin/env bash
# Writes one node's configuration for real-node.sh (which documents the layout):
#   real-node-config.sh NODE_DIR NAME IP PKI_DIR CGROUP_ROOT PAUSE_IMAGE K I
# NODE_DIR/containerd.toml, kubelet.yaml, kubeconfig (a client certificate for system:node:NAME,
# signed by the API server's CA in PKI_DIR), cni/ (a bridge network inside the node's own
# namespace, whose pods reach the API server through the node as on a real cluster; a kubelet is
# Ready only with a pod network),
# and the cgroup CGROUP_ROOT in every v1 hierarchy, which the kubelet requires to exist.
set -euo pipefail
node_dir=$1 name=$2 ip=$3 pki=$4 cgroup_root=$5 pause_image=$6 k=$7 i=$8

mkdir -p "$node_dir/cni"
cat >"$node_dir/containerd.toml" <<TOML
version = 2
root = "/var/lib/containerd"
state = "/run/containerd"
[grpc]
  address = "/run/containerd/containerd.sock"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$pause_image"
  # Test machines may lack CAP_SYS_RESOURCE, without which runc cannot give the sandbox (or a
  # system-node-critical pod) a negative OOM score and the pod never starts: never go below ours.
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$node_dir/cni"
TOML

# Pod addresses exist only inside this node's namespace: 10.251.K.(16*I)/28 on its cni0, the
# node's cni0 address the pods' default route (real-node-init.sh leads 10.0.0.1:443 on from there).
cat >"$node_dir/cni/10-pods.conflist" <<JSON
{"cniVersion": "0.4.0", "name": "nodehook-pods", "plugins": [
  {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false,
   "ipam": {"type": "host-local", "ranges": [[{"subnet": "10.251.$k.$((16 * i))/28"}]],
            "routes": [{"dst": "0.0.0.0/0"}]}}]}
JSON

cat >"$node_dir/kubelet.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
# This machine's cgroups are v1 (hybrid), which kubelet 1.36 refuses unless told.
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: /$cgroup_root
address: $ip
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
# Only the API server and the tests reach the node's network namespace.
authentication:
  anonymous: {enabled: true}
  webhook: {enabled: false}
  x509: {clientCAFile: $pki/ca.crt}
authorization: {mode: AlwaysAllow}
containerRuntimeEndpoint: unix:///run/containerd/containerd.sock
failSwapOn: false
# A test machine's disk is not the node's: never evict for it.
evictionHard: {memory.available: 50Mi, nodefs.available: 1%, imagefs.available: 1%, nodefs.inodesFree: 1%}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
maxPods: 30
serializeImagePulls: false
resolvConf: /etc/resolv.conf
# ConfigMap changes and probes show up quickly.
syncFrequency: 10s
nodeStatusUpdateFrequency: 5s
YAML

openssl ecparam -name prime256v1 -genkey -noout -out "$node_dir/kubelet-client.key" 2>/dev/null
openssl req -new -key "$node_dir/kubelet-client.key" -subj "/O=system:nodes/CN=system:node:$name" 2>/dev/null |
	openssl x509 -req -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial -CAserial "$node_dir/ca.srl" \
		-days 3650 -out "$node_dir/kubelet-client.crt" 2>/dev/null
# The kubelet reaches the API server as pods do: at the `kubernetes` Service address, which
# real-node-init.sh leads to the API server.
cat >"$node_dir/kubeconfig" <<YAML
apiVersion: v1
kind: Config
clusters:
- name: real-node
  cluster: {server: "https://10.0.0.1:443", certificate-authority: "$pki/ca.crt"}
users:
- name: $name
  user: {client-certificate: "$node_dir/kubelet-client.crt", client-key: "$node_dir/kubelet-client.key"}
contexts:
- name: real-node
  context: {cluster: real-node, user: $name}
current-context: real-node
YAML

for h in /sys/fs/cgroup/*/; do
	[[ -f $h/cgroup.procs ]] || continue
	mkdir -p "$h$cgroup_root"
	# A new cpuset cgroup has no CPUs or memory nodes until given its parent's.
	if [[ -f $h/cpuset.cpus ]]; then
		cat "$h/cpuset.cpus" >"$h$cgroup_root/cpuset.cpus"
		cat "$h/cpuset.mems" >"$h$cgroup_root/cpuset.mems"
	fi
done
