#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Fetches (once) the pinned NCCL and CUDA runtime wheels of tests/api/nccl_wheels.txt and prints
# the folder that holds one unpacked folder per wheel (NAME-VERSION/lib, NAME-VERSION/include),
# for the NCCL version matrix test (tests/api/nccl_versions_test.sh). CI runs it in its deps
# phase; the test runs it too and uses what it prints.
#
#   bash scripts/nccl-wheels.sh            # fetch what is missing, print the folder
#   bash scripts/nccl-wheels.sh --cached   # print the folder only if complete (exit 3 if not)
#
# The cache lives outside the clone, in $SDDP_WHEEL_CACHE (default /var/cache/slurm-ddp/wheels),
# under a name keyed by the hash of the list and this script: a changed pin fetches a new one. It
# is marked complete only at its end, under a lock, so an interrupted fetch is never mistaken for
# a finished one. Progress goes to stderr; the folder is the only line on stdout.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
LIST="$ROOT/tests/api/nccl_wheels.txt"
CACHE=${SDDP_WHEEL_CACHE:-/var/cache/slurm-ddp/wheels}

log() { echo "nccl-wheels: $*" >&2; }
wheel_file() { # wheel_file NAME VERSION: the downloaded wheel's path, or nothing
    local f
    for f in "$dl/${1//-/_}-$2"-*.whl; do
        if [ -f "$f" ]; then
            echo "$f"
            return 0
        fi
    done
}
die() { log "$*"; exit 1; }

[ -f "$LIST" ] || die "no wheel list at $LIST"
key=$(cat "$LIST" "$0" | sha256sum | cut -c1-12)
dir="$CACHE/nccl-$key"
if [ -f "$dir/.complete" ]; then
    echo "$dir"
    exit 0
fi
[ "${1:-}" = --cached ] && exit 3
command -v unzip >/dev/null || die "unzip is needed (apt-get install unzip)"
pip=(python3 -m pip --disable-pip-version-check --no-input -q)
"${pip[@]}" --version >/dev/null 2>&1 || die "python3 -m pip is needed"

mkdir -p "$CACHE"
exec 9>"$CACHE/.nccl-$key.lock"
flock -w 1800 9 || die "another fetch of $dir holds its lock for 30 minutes"
if [ -f "$dir/.complete" ]; then
    echo "$dir"
    exit 0
fi
rm -rf "$dir"
# Downloads are kept apart from the unpacked folders, so that a changed list refetches only the
# wheels it adds.
dl="$CACHE/.downloads"
mkdir -p "$dir" "$dl"
t0=$SECONDS
grep -Ev '^[[:space:]]*(#|$)' "$LIST" | while read -r pin; do
    name=${pin%%==*} version=${pin##*==}
    whl=$(wheel_file "$name" "$version")
    if [ -z "$whl" ]; then
        log "fetching $pin"
        # Wheels only, for this machine (they hold shared libraries, no Python code).
        "${pip[@]}" download --no-deps --only-binary=:all: -d "$dl" "$pin" ||
            die "pip download $pin failed (no network, or the pin is gone from PyPI)"
        whl=$(wheel_file "$name" "$version")
        [ -n "$whl" ] || die "$pin: no wheel file after the download"
    fi
    out="$dir/$name-$version"
    mkdir -p "$out/lib" "$out/include"
    unzip -q -j -o "$whl" 'nvidia/*/lib/*.so*' -d "$out/lib"
    unzip -q -j -o "$whl" 'nvidia/*/include/nccl.h' -d "$out/include" 2>/dev/null || true
done
touch "$dir/.complete"
log "fetched into $dir in $((SECONDS - t0)) s ($(du -sh "$dir" | cut -f1))"
echo "$dir"
