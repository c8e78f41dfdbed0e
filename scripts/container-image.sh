#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Builds (once) and prints the path of the container images the container tests run
# (tests/containers/): Debian 12 with Python and Debian's PyTorch, made here because no registry
# is reachable.
#
#   bash scripts/container-image.sh     # prints DIR, which holds:
#     DIR/image.sqsh          for pyxis and Charliecloud: /etc/environment has PYTORCH_VERSION,
#                             as NGC's PyTorch images carry it (pyxis then copies SLURM_PROCID to
#                             RANK, and enroot's 50-slurm-pytorch.sh hook writes its own
#                             MASTER_ADDR, MASTER_PORT and WORLD_SIZE)
#     DIR/image-master.sqsh   the same, plus MASTER_ADDR=localhost and MASTER_PORT=29500 as some
#                             images carry them (an image's ENV wins over the job's variables)
#     DIR/rootfs              the tree of image-master.sqsh, for Podman's --rootfs
#
# PyTorch is Debian 12's python3-torch (1.13), pinned by the release; libhwloc15 is what slurm-ddp
# and the C example need when they are mounted in. /etc/hosts holds only localhost, as images
# built by Docker do: runtimes bind the node's file over it, and Charliecloud only where the image
# has one (mmdebstrap makes none). The images live in $SDDP_CONTAINER_CACHE
# (default /var/cache/slurm-ddp/containers) under a name keyed by this script and the apt sources
# they were built from; a build is marked complete only at its end. About 3 minutes and 230 MB of
# downloads on a 2-core machine. Needs mmdebstrap and squashfs-tools (tests/cluster/install-deps.sh).
set -euo pipefail
CACHE=${SDDP_CONTAINER_CACHE:-/var/cache/slurm-ddp/containers}
SUITE=bookworm
PACKAGES=python3,python3-torch,libhwloc15
# What a trainer in each image sees unless the step says otherwise (see above).
IMAGE_ENV='PYTORCH_VERSION=1.13.0a0'
MASTER_ENV='MASTER_ADDR=localhost
MASTER_PORT=29500'
export IMAGE_ENV  # read by the customize hook, a shell of its own

log() { echo "container-image: $*" >&2; }
die() { log "error: $*"; exit 1; }

for t in mmdebstrap mksquashfs; do
    command -v "$t" >/dev/null || die "missing $t: run tests/cluster/install-deps.sh"
done
sources=""
for f in /etc/apt/sources.list.d/*.sources /etc/apt/sources.list; do
    if [ -s "$f" ]; then sources=$f; break; fi
done
[ -n "$sources" ] || die "no apt sources in /etc/apt: mmdebstrap needs a Debian mirror"
key=$(cat "$0" "$sources" | sha256sum | cut -c1-12)
dir=$CACHE/image-$key
if [ -f "$dir/.complete" ]; then echo "$dir"; exit 0; fi

mkdir -p "$CACHE"
exec 9>"$dir.lock"
flock -w 1200 9 || die "another build holds $dir.lock for 20 minutes"
if [ -f "$dir/.complete" ]; then echo "$dir"; exit 0; fi
rm -rf "$dir"
mkdir -p "$dir"
t0=$SECONDS
log "building $dir: $SUITE with $PACKAGES (first run: a few minutes)"
# The mirror of this machine's own sources; --variant=apt is the smallest set that still has apt
# (images from registries have it).
# shellcheck disable=SC2016 # $1 and $IMAGE_ENV belong to the hooks' own shells
if ! mmdebstrap --quiet --variant=apt --include="$PACKAGES" \
    --customize-hook='printf "%s\n" "$IMAGE_ENV" >>"$1/etc/environment"' \
    --customize-hook='printf "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n" >"$1/etc/hosts"' \
    --customize-hook='rm -rf "$1"/var/cache/apt/archives/*.deb "$1"/var/lib/apt/lists/*' \
    "$SUITE" "$dir/rootfs" "$sources" >"$dir/build.log" 2>&1; then
    tail -30 "$dir/build.log" >&2
    die "mmdebstrap failed (the log's tail is above; the whole log: $dir/build.log)"
fi
grep -qx "$IMAGE_ENV" "$dir/rootfs/etc/environment" || die "the image's /etc/environment lacks $IMAGE_ENV"
# Two images from one tree: lz4 packs it in seconds.
mksquashfs "$dir/rootfs" "$dir/image.sqsh" -comp lz4 -quiet -no-progress >>"$dir/build.log" 2>&1 ||
    die "mksquashfs failed: $dir/build.log"
printf '%s\n' "$MASTER_ENV" >>"$dir/rootfs/etc/environment"
mksquashfs "$dir/rootfs" "$dir/image-master.sqsh" -comp lz4 -quiet -no-progress >>"$dir/build.log" 2>&1 ||
    die "mksquashfs failed: $dir/build.log"
touch "$dir/.complete"
log "built $dir in $((SECONDS - t0)) s ($(du -sh "$dir/image.sqsh" | cut -f1) squashfs)"
echo "$dir"
