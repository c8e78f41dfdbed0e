#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Builds (once) and prints the path of NVIDIA's enroot and pyxis, from the unmodified upstream
# tarballs in ../shared/containers, for the container tests (tests/containers/).
#
#   bash scripts/container-kit.sh enroot                 # the enroot prefix (bin/enroot, etc/enroot, ...)
#   bash scripts/container-kit.sh pyxis [SLURM_INCLUDE]  # spank_pyxis.so built against that Slurm's
#                                                        # headers (default /usr/include: Debian's 22.05)
#
# Neither is packaged for Debian 12. enroot links its helpers statically against musl from git
# submodules a tarball does not hold, so they are built against glibc and libbsd instead (the
# recipe of ../shared/containers/README.md); pyxis builds as it is, but only for the Slurm whose
# spank.h it saw (Slurm refuses a plugin of another release). Each result lives in
# $SDDP_CONTAINER_CACHE (default /var/cache/slurm-ddp/containers) under a name keyed by the hash of
# its tarball, this script and, for pyxis, the Slurm headers: a second run reuses it, a new
# tarball or release builds a new one. A build is marked complete only at its end. Paths go to
# stdout, progress to stderr. Needs makeself libbsd-dev libcap-dev (tests/cluster/install-deps.sh).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${SDDP_CONTAINER_CACHE:-/var/cache/slurm-ddp/containers}
SOURCES=${SDDP_CONTAINER_SOURCES:-}
ENROOT_TARBALL=enroot-4.1.2-14-g8ea147d.tar.gz
PYXIS_TARBALL=pyxis-0.24.0.tar.gz

log() { echo "container-kit: $*" >&2; }
die() { log "error: $*"; exit 1; }

# The tarballs sit next to the checkout (../shared/containers), as the Slurm tarballs do.
find_tarball() {
    local d
    for d in "$SOURCES" "$ROOT/../shared/containers" /work/shared/containers; do
        if [ -n "$d" ] && [ -f "$d/$1" ]; then echo "$d/$1"; return 0; fi
    done
    die "$1 not found in ../shared/containers (or SDDP_CONTAINER_SOURCES=${SOURCES:-unset})"
}

key_of() { cat "$@" "$0" | sha256sum | cut -c1-12; }

# locked_build DIR FUNCTION ARGS...: FUNCTION builds into DIR (absent at its start) unless a
# complete DIR is there; a second caller waits for the first instead of building it again.
locked_build() {
    local dir=$1 t0=$SECONDS
    shift
    if [ -f "$dir/.complete" ]; then echo "$dir"; return 0; fi
    mkdir -p "$CACHE"
    exec 9>"$dir.lock"
    # Bounded: a build takes under a minute; a holder gone astray must not hang CI.
    flock -w 900 9 || die "another build holds $dir.lock for 15 minutes"
    if [ ! -f "$dir/.complete" ]; then
        rm -rf "$dir"
        "$@" "$dir"
        touch "$dir/.complete"
        log "built $dir in $((SECONDS - t0)) s"
    fi
    flock -u 9
    echo "$dir"
}

build_enroot() {
    local dir=$1 src u
    for u in makeself /usr/include/bsd/string.h /usr/include/sys/capability.h; do
        [ -e "$u" ] || command -v "$u" >/dev/null ||
            die "missing $u: run tests/cluster/install-deps.sh (makeself libbsd-dev libcap-dev)"
    done
    src=$(mktemp -d /tmp/sddp-enroot-build.XXXXXX)
    tar -xzf "$(find_tarball "$ENROOT_TARBALL")" -C "$src" --strip-components=1
    (
        cd "$src"
        exec >>build.log 2>&1
        # The submodules (musl, makeself, kernel headers) are not in the tarball: Debian's
        # makeself stands in for the bundled one, and the helpers are linked against glibc and
        # libbsd (glibc 2.36 has no strlcat; the tarball's deps/libbsd is a subset).
        mkdir -p deps/dist/makeself/bin deps/makeself deps/linux-headers
        cp "$(command -v makeself)" deps/dist/makeself/bin/enroot-makeself
        touch deps/makeself/.stamp deps/linux-headers/.stamp
        for u in enroot-mount enroot-switchroot enroot-nsenter enroot-aufs2ovlfs enroot-mksquashovlfs; do
            gcc -O2 -D_GNU_SOURCE -DHAVE_DIRFD -DHAVE_DIRENT_H -include bsd/string.h \
                -include bsd/stdlib.h -include bsd/unistd.h -o "bin/$u" "bin/$u.c" -lbsd -lcap
        done
        make -s FORCE_GLIBC=1 install prefix="$dir" sysconfdir="$dir/etc"
    ) || { tail -30 "$src/build.log" >&2; rm -rf "$src"; die "enroot did not build (the log's tail is above)"; }
    rm -rf "$src"
    "$dir/bin/enroot" version >/dev/null || die "the built enroot does not run: $dir/bin/enroot version"
}

build_pyxis() {
    local include=$1 dir=$2 src
    src=$(mktemp -d /tmp/sddp-pyxis-build.XXXXXX)
    tar -xzf "$(find_tarball "$PYXIS_TARBALL")" -C "$src" --strip-components=1
    # From the environment, not the command line: pyxis's Makefile appends $(CPPFLAGS) to its own.
    if ! CPPFLAGS="-I$include" make -s -C "$src" >"$src/build.log" 2>&1; then
        tail -30 "$src/build.log" >&2
        rm -rf "$src"
        die "pyxis did not build against $include/slurm/spank.h (the log's tail is above)"
    fi
    mkdir -p "$dir"
    install -m 0644 "$src/spank_pyxis.so" "$dir/spank_pyxis.so"
    # The release it was built for, for the messages of the tests that load it.
    sed -n 's/^#define SLURM_VERSION_STRING "\(.*\)"$/\1/p' "$include/slurm/slurm_version.h" >"$dir/slurm-version"
    rm -rf "$src"
}

case "${1:-}" in
    enroot)
        locked_build "$CACHE/enroot-$(key_of "$(find_tarball "$ENROOT_TARBALL")")" build_enroot
        ;;
    pyxis)
        include=$(realpath -m "${2:-/usr/include}")
        [ -f "$include/slurm/spank.h" ] ||
            die "no slurm/spank.h under $include: install libslurm-dev or name a Slurm prefix's include/"
        key=$(key_of "$(find_tarball "$PYXIS_TARBALL")" "$include/slurm/spank.h" "$include/slurm/slurm_version.h")
        locked_build "$CACHE/pyxis-$key" build_pyxis "$include"
        ;;
    *) die "usage: $0 enroot | pyxis [SLURM_INCLUDE_DIR]" ;;
esac
