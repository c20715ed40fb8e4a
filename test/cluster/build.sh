#!/usr/bin/env bash
# Builds a Go binary for the tests once and caches it:
#   build.sh            nodehook-testcluster (kube-apiserver + embedded etcd), from this module
#   build.sh kubectl    kubectl (kustomize built in), from ./kubectl, the same k8s.io release
#   build.sh helm       helm, from ./helm (helm.sh/helm/v4): lints and renders deploy/helm/nodehook
#   build.sh nodes      nodehook-k8s-node (kubelet, kube-controller-manager, kube-scheduler in one
#                       binary), from ./nodes, the same k8s.io release; test/cluster/real-node.sh runs it
# The first testcluster build downloads ~600 MB of modules and compiles ~2000
# packages, which takes a while on 2 cores; later calls return at once unless
# go.mod, go.sum, a .go file of that module, this script or the Go version changed.
# Progress goes to stderr; the last line on stdout is the binary's path.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
out_dir="${NODEHOOK_CACHE_DIR:-$repo/build/cache}"
case "${1:-testcluster}" in
testcluster) src="$here" bin="$out_dir/nodehook-testcluster" what="kube-apiserver + etcd" ;;
kubectl) src="$here/kubectl" bin="$out_dir/kubectl" what="kubectl" ;;
helm) src="$here/helm" bin="$out_dir/helm" what="helm" ;;
nodes) src="$here/nodes" bin="$out_dir/nodehook-k8s-node" what="kubelet + controller-manager + scheduler" ;;
*) echo "usage: build.sh [testcluster|kubectl|helm|nodes]" >&2; exit 2 ;;
esac
stamp="$bin.stamp"

# Go 1.26 is enough for kubernetes 1.36; never fetch another toolchain.
export GOTOOLCHAIN=local GOWORK=off GOFLAGS="-mod=mod -buildvcs=false"

log() { echo "build.sh: $*" >&2; }

cd "$src"
source_hash() { (cat go.mod go.sum ./*.go "$here/build.sh"; go version) | sha256sum | cut -d' ' -f1; }
hash="$(source_hash)"
up_to_date() { [[ -x $bin && -f $stamp && "$(cat "$stamp")" == "$hash" ]]; }
if up_to_date; then
	echo "$bin"
	exit 0
fi

mkdir -p "$out_dir"
# Two test runs starting at once must not build twice into the same file.
if command -v flock >/dev/null; then
	exec 9>"$bin.lock"
	flock 9
	if up_to_date; then
		echo "$bin"
		exit 0
	fi
fi

# every N CMD...: runs CMD, printing a line every N seconds so a long, quiet
# step does not look hung.
every() {
	local n=$1 start=$SECONDS; shift
	"$@" &
	local pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		sleep 1
		if (( (SECONDS - start) % n == 0 )) && kill -0 "$pid" 2>/dev/null; then
			log "  ... still running ($((SECONDS - start))s)"
		fi
	done
	wait "$pid"
}

t0=$SECONDS
log "downloading modules into $(go env GOMODCACHE) (first time: ~600 MB)..."
every 15 go mod download
log "modules ready after $((SECONDS - t0))s"

total="$(go list -deps . | wc -l)"
log "compiling $what: up to $total packages (the first testcluster build takes 10-20 minutes on 2 cores)..."
t1=$SECONDS
# go build -v names each package as it is compiled (cached ones are skipped),
# so counting its lines gives a progress meter.
if ! go build -trimpath -p 2 -ldflags="-s -w" -v -o "$bin.tmp" . 2>&1 |
	awk -v total="$total" '
		/^#|: / { print > "/dev/stderr"; next }   # errors and go: messages
		{ if (++n % 50 == 0) printf "build.sh:   compiled %d/%d packages\n", n, total > "/dev/stderr" }'
then
	log "build failed"
	exit 1
fi
mv -f "$bin.tmp" "$bin"
# Sources edited during the build: keep the binary but rebuild next time.
if [[ "$(source_hash)" == "$hash" ]]; then
	echo "$hash" >"$stamp"
fi
log "built in $((SECONDS - t1))s"
echo "$bin"
