#!/usr/bin/env bash
# Builds the image's runtime root filesystem without a container runtime: debootstrap of Debian
# bookworm (minbase), then deploy/image/install-runtime.sh in a chroot, the step the
# Dockerfile's runtime stage runs. Cached under ${NODEHOOK_CACHE_DIR:-build/cache}, keyed by a
# hash of deploy/image/ and this script, so a changed package list builds a new one.
# Needs root and debootstrap. Progress goes to stderr; the last line on stdout is the directory.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
out_dir="${NODEHOOK_CACHE_DIR:-$repo/build/cache}"
mirror="${NODEHOOK_DEBIAN_MIRROR:-http://deb.debian.org/debian}"

log() { echo "rootfs.sh: $*" >&2; }

hash="$(cat "$repo"/deploy/image/* "$here/rootfs.sh" | sha256sum | cut -c1-16)"
rootfs="$out_dir/image-rootfs-$hash"
if [[ -f $rootfs/.complete ]]; then
	echo "$rootfs"
	exit 0
fi

mkdir -p "$out_dir"
exec 9>"$rootfs.lock"
flock 9
if [[ -f $rootfs/.complete ]]; then
	echo "$rootfs"
	exit 0
fi

rm -rf "$rootfs" "$rootfs.tmp"
t0=$SECONDS
log "debootstrap --variant=minbase bookworm (about a minute)..."
# In a mount namespace of its own: the /proc and /sys debootstrap mounts in the target can never
# outlive it, not even when it fails half-way.
unshare --mount --propagation private \
	debootstrap --variant=minbase bookworm "$rootfs.tmp" "$mirror" >"$out_dir/image-rootfs-$hash.log" 2>&1 || {
	log "debootstrap failed, see $out_dir/image-rootfs-$hash.log"
	exit 1
}
log "installing the runtime stage (deploy/image/install-runtime.sh)..."
mkdir -p "$rootfs.tmp/tmp/image"
cp "$repo"/deploy/image/* "$rootfs.tmp/tmp/image/"
# The chroot needs the host's resolver to reach the mirror.
cp /etc/resolv.conf "$rootfs.tmp/etc/resolv.conf"
chroot "$rootfs.tmp" /tmp/image/install-runtime.sh >>"$out_dir/image-rootfs-$hash.log" 2>&1 || {
	log "install-runtime.sh failed, see $out_dir/image-rootfs-$hash.log"
	exit 1
}
rm -rf "$rootfs.tmp/tmp/image"
: >"$rootfs.tmp/etc/resolv.conf"
mv "$rootfs.tmp" "$rootfs"
touch "$rootfs/.complete"
log "built in $((SECONDS - t0))s: $rootfs"
echo "$rootfs"
