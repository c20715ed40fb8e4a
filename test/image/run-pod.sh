#!/usr/bin/env bash
# Runs a command in the image the way a container runtime runs the pod, without one:
#   run-pod.sh ROOTFS BINARY POD_DIR USER[:GROUP] COMMAND...
# - new mount and PID namespaces (COMMAND's first process is PID 1, as in a container);
# - the image = ROOTFS (test/image/rootfs.sh) + BINARY at /usr/local/bin/nodehook, the
#   Dockerfile's last layer; a throwaway overlay holds the mount points a runtime would create;
# - the root filesystem read-only (readOnlyRootFilesystem), /tmp an emptyDir (tmpfs);
# - POD_DIR/{config,hooks,serviceaccount} mounted read-only at /etc/nodehook/config,
#   /etc/nodehook/hooks and /var/run/secrets/kubernetes.io/serviceaccount (the ConfigMaps and the
#   projected token), POD_DIR/{state,widgets} read-write at /var/lib/nodehook and
#   /host/var/lib/nodehook-widgets (the hostPath volumes);
# - COMMAND run by chroot as USER, with an empty environment: pass variables with `env -i K=V`.
# The network is the host's, so the loopback test API server is reachable. Needs root.
set -euo pipefail
if [[ ${1:-} != --inside ]]; then
	exec unshare --mount --pid --fork --kill-child -- "$0" --inside "$@"
fi
shift
rootfs=$1 binary=$2 pod=$3 user=$4
shift 4

mount --make-rprivate /
layer="$(mktemp -d "$pod/layer.XXXXXX")"
mkdir "$layer/upper" "$layer/work" "$layer/root"
m="$layer/root"
mount -t overlay overlay -o "lowerdir=$rootfs,upperdir=$layer/upper,workdir=$layer/work" "$m"
install -m 0755 "$binary" "$m/usr/local/bin/nodehook"
mkdir -p "$m/etc/nodehook/config" "$m/etc/nodehook/hooks" "$m/var/lib/nodehook" \
	"$m/host/var/lib/nodehook-widgets" "$m/run/secrets/kubernetes.io/serviceaccount"
# Bound to itself first, so that making it read-only below leaves the volumes writable.
mount --bind "$m" "$m"

volume() { # SOURCE TARGET ro|rw
	mount --bind "$1" "$m$2"
	[[ $3 == rw ]] || mount -o remount,bind,ro "$m$2"
}
volume "$pod/config" /etc/nodehook/config ro
volume "$pod/hooks" /etc/nodehook/hooks ro
volume "$pod/serviceaccount" /run/secrets/kubernetes.io/serviceaccount ro
volume "$pod/state" /var/lib/nodehook rw
volume "$pod/widgets" /host/var/lib/nodehook-widgets rw
mount -t proc proc "$m/proc"
mount -t tmpfs -o size=64m,mode=1777 tmpfs "$m/tmp"
# A minimal /dev, as a runtime gives a container.
mount -t tmpfs -o size=1m,mode=755 tmpfs "$m/dev"
for dev in null zero random urandom; do
	touch "$m/dev/$dev"
	mount --bind "/dev/$dev" "$m/dev/$dev"
done
mount -o remount,bind,ro "$m"

exec chroot --userspec="$user" "$m" "$@"
