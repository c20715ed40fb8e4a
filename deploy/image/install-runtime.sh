#!/bin/sh
# The image's runtime stage: installs deploy/image/runtime-packages.txt and adds the non-root
# user nodehook (65532) the DaemonSet runs as. Run by the Dockerfile, and by the image test in a
# debootstrap root filesystem (test/image/rootfs.sh), so both get the same image.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
grep -v -e '^#' -e '^$' "$here/runtime-packages.txt" | xargs apt-get install -y -qq --no-install-recommends
apt-get clean
rm -rf /var/lib/apt/lists/*
groupadd --gid 65532 nodehook
useradd --uid 65532 --gid 65532 --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin nodehook
