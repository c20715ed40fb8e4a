#!/usr/bin/env bash
# Builds the nodehook image from the project's Dockerfile, without a Docker daemon or a registry:
#   1. a Debian bookworm base (debootstrap --variant=minbase), committed to buildah's storage; it
#      is both the Dockerfile's BUILD_BASE and its BASE (the stages install what they need);
#   2. `buildah bud --isolation chroot` of the Dockerfile with those build args;
#   3. `buildah push IMAGE oci-archive:FILE:IMAGE`, the tarball `ctr images import` takes.
# Cached under ${NODEHOOK_IMAGE_CACHE_DIR:-$XDG_CACHE_HOME/nodehook-image} (~/.cache/...), outside
# the checkout like ccache and Go's build cache, so every checkout on the machine shares it: the
# base is keyed on its recipe and the mirror, the image on the base and the build context's files
# (context_hash), so an unchanged tree returns at once. buildah's storage lives there too
# (buildah/), not in /var, and so does the compiler cache the Dockerfile's build stage uses
# (ccache/, mounted at /ccache), which makes a rebuild after a small change recompile only what
# changed.
# Needs root, buildah and debootstrap. Progress goes to stderr; the last line on stdout is
#   image=localhost/nodehook:test archive=PATH
# (the reference is the same for every build, the one test/cluster/real-node-component names; the
# archive's name carries the hash)
#   build-image.sh pause    instead: the pod sandbox image of test/cluster/real-node.sh's nodes,
#                           test/image/pause.c compiled statically into an image of one file
#                           (image=localhost/nodehook-pause:HASH archive=PATH; needs a C compiler)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
cache_home="${XDG_CACHE_HOME:-${HOME:-$repo/build}/.cache}"
out_dir="${NODEHOOK_IMAGE_CACHE_DIR:-$cache_home/nodehook-image}"
mirror="${NODEHOOK_DEBIAN_MIRROR:-http://deb.debian.org/debian}"

log() { echo "build-image.sh: $*" >&2; }
for tool in buildah debootstrap; do
	command -v "$tool" >/dev/null || { log "$tool is not installed (test/install-deps.sh installs it)"; exit 1; }
done

mkdir -p "$out_dir/buildah"
# vfs: buildah's overlay driver cannot stack on the overlay filesystem a CI machine's root often is.
bh() { buildah --root "$out_dir/buildah/storage" --runroot "$out_dir/buildah/run" --storage-driver vfs "$@"; }

# One build of each image at a time (buildah locks its storage itself).
exec 9>"$out_dir/buildah/build-image-${1:-nodehook}.lock"
flock 9

# push_archive IMAGE ARCHIVE LOG: the OCI archive containerd imports; the image leaves buildah's
# storage (a vfs copy per layer), the archive is the cache.
push_archive() {
	bh push -q "$1" "oci-archive:$2.tmp:$1" >>"$3" 2>&1
	mv -f "$2.tmp" "$2"
	bh rmi -f "$1" >/dev/null 2>&1 || true
}

if [[ ${1:-} == pause ]]; then
	hash="$(cat "$here/pause.c" "$here/build-image.sh" | sha256sum | cut -c1-16)"
	image="localhost/nodehook-pause:$hash"
	archive="$out_dir/nodehook-pause-$hash.oci.tar"
	if [[ ! -f $archive ]]; then
		work="$(mktemp -d)"
		trap 'rm -rf "$work"' EXIT
		cc -static -O2 -o "$work/pause" "$here/pause.c"
		ctr="$(bh from scratch)"
		bh copy "$ctr" "$work/pause" /pause >/dev/null
		bh config --entrypoint '["/pause"]' "$ctr"
		bh commit --rm -q "$ctr" "$image" >/dev/null
		push_archive "$image" "$archive" "$out_dir/nodehook-pause-$hash.log"
		log "pause image built: $archive"
	fi
	echo "image=$image archive=$archive"
	exit 0
fi

# Bump base_recipe when the commands below that make the base change.
base_recipe="debootstrap --variant=minbase bookworm, v1"
base_hash="$(echo "$base_recipe $mirror" | sha256sum | cut -c1-16)"
base="localhost/nodehook-bookworm-base:$base_hash"
if ! bh inspect --type image "$base" >/dev/null 2>&1; then
	t0=$SECONDS
	rootfs="$out_dir/buildah/base-$base_hash.tmp"
	rm -rf "$rootfs"
	log "debootstrap --variant=minbase bookworm for the base image (about a minute)..."
	# In a mount namespace of its own, so debootstrap's /proc and /sys mounts cannot outlive it.
	unshare --mount --propagation private \
		debootstrap --variant=minbase bookworm "$rootfs" "$mirror" >"$out_dir/buildah/base-$base_hash.log" 2>&1 || {
		log "debootstrap failed, see $out_dir/buildah/base-$base_hash.log"
		exit 1
	}
	: >"$rootfs/etc/resolv.conf"
	ctr="$(bh from scratch)"
	mnt="$(bh mount "$ctr")"
	tar -C "$rootfs" -c . | tar -C "$mnt" -x
	bh umount "$ctr" >/dev/null
	bh config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --cmd /bin/bash "$ctr"
	bh commit --rm -q "$ctr" "$base" >/dev/null
	rm -rf "$rootfs"
	log "base $base committed in $((SECONDS - t0))s"
fi

# The files of the build context the image depends on, by content (tracked or not, minus what
# git ignores): all but the tests, the docs and the manifests, which no image step reads, so
# editing a test does not rebuild the image.
context_hash() {
	cd "$repo"
	if git rev-parse --git-dir >/dev/null 2>&1; then
		{ git ls-files -z -co --exclude-standard | grep -zvE '^(test|docs|deploy)/|\.md$'
		  git ls-files -z -co --exclude-standard deploy/image; } | LC_ALL=C sort -z |
			xargs -0 sh -c 'for f; do [ -f "$f" ] && printf "%s\n" "$f" && cat "$f"; done; :' sh
	else
		find . \( -path ./build -o -path ./.git -o -path ./test -o -path ./docs \) -prune -o -type f -print0 |
			LC_ALL=C sort -z | xargs -0 cat
	fi
}
hash="$( (echo "$base_hash"; context_hash) | sha256sum | cut -c1-16)"
image="localhost/nodehook:test"
archive="$out_dir/nodehook-image-$hash.oci.tar"
if [[ ! -f $archive ]]; then
	t0=$SECONDS
	log "buildah bud of the Dockerfile (the agent is compiled inside, through the image's ccache)..."
	mkdir -p "$out_dir/ccache"
	if ! bh bud --isolation chroot --layers=false -q --build-arg "BASE=$base" --build-arg "BUILD_BASE=$base" \
		--volume "$out_dir/ccache:/ccache" \
		-t "$image" -f "$repo/Dockerfile" "$repo" >"$out_dir/nodehook-image-$hash.log" 2>&1; then
		log "buildah bud failed, see $out_dir/nodehook-image-$hash.log"
		exit 1
	fi
	push_archive "$image" "$archive" "$out_dir/nodehook-image-$hash.log"
	log "image built in $((SECONDS - t0))s"
fi
echo "image=$image archive=$archive"
