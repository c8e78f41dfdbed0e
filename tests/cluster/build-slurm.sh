#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds a Slurm release from a source tarball into a private prefix inside this checkout, so the
# plugin can be built against, and the integration tests run under, the Slurm that sites run
# (Debian 12 ships 22.05). Nothing is cached outside the checkout.
#
#   tests/cluster/build-slurm.sh [TARBALL|VERSION]   prints the prefix on stdout when done
#
# TARBALL defaults to $SLURM_TARBALL, then ../shared/slurm/slurm-26.05.3.tar.gz next to the
# checkout; a VERSION (e.g. 25.11.7) picks ../shared/slurm/slurm-VERSION.tar.gz. The prefix is .slurm-prefix/VERSION (ignored by git) and is reused when a previous
# run completed it (a .complete stamp written last), so a second call returns at once.
# Knobs: SLURM_TARBALL, SLURM_PREFIX_ROOT (default <checkout>/.slurm-prefix), JOBS (default nproc).
# Needs libmunge-dev libpmix-dev libhwloc-dev libjson-c-dev liblz4-dev (install-deps.sh).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
log() { printf 'build-slurm.sh: %s\n' "$*" >&2; }
die() {
  log "error: $*"
  exit 1
}

tarball=${1:-${SLURM_TARBALL:-}}
wanted=26.05.3
if [[ $tarball =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
  wanted=$tarball
  tarball=
fi
if [[ -z $tarball ]]; then
  for candidate in "$root/../shared/slurm/slurm-$wanted.tar.gz" "/work/shared/slurm/slurm-$wanted.tar.gz"; do
    [[ -f $candidate ]] && tarball=$candidate && break
  done
fi
[[ -n $tarball && -f $tarball ]] ||
  die "no Slurm $wanted tarball: pass one (e.g. ../shared/slurm/slurm-$wanted.tar.gz), a version, or set SLURM_TARBALL"
name=$(basename "$tarball")
[[ $name =~ ^slurm-([0-9]+\.[0-9]+\.[0-9]+)\.tar\.(gz|bz2|xz)$ ]] ||
  die "tarball name must be slurm-X.Y.Z.tar.gz (the version names the prefix): $name"
version=${BASH_REMATCH[1]}

prefix_root=${SLURM_PREFIX_ROOT:-$root/.slurm-prefix}
prefix=$prefix_root/$version
pmix=/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)/pmix2
# --enable-multiple-slurmd: all slurmd of the test cluster share one munged, which then sees
# the launch credential srun sends to every node as a replay; only a multiple-slurmd build
# accepts that ("Munge decode failed: Replayed credential", "Malformed RPC" otherwise).
# slurmrestd, X11 and HDF5 are of no use to the tests and cost build time.
config_flags=(--prefix="$prefix" --sysconfdir="$prefix/etc" --with-pmix="$pmix"
  --enable-multiple-slurmd --disable-debug --disable-slurmrestd --disable-x11 --without-hdf5
  --without-rpath)
# The stamp holds the configure flags: a prefix built with other flags is rebuilt.
if [[ -f $prefix/.complete && $(cat "$prefix/.complete") == "${config_flags[*]}" ]]; then
  log "Slurm $version already built in $prefix"
  echo "$prefix"
  exit 0
fi

for header in munge.h json-c/json.h lz4.h hwloc.h; do
  [[ -f /usr/include/$header ]] || die "missing /usr/include/$header: run tests/cluster/install-deps.sh"
done

src=$prefix_root/src-$version
rm -rf "$src" "$prefix"
mkdir -p "$src"
start=$(date +%s)
log "unpacking $tarball"
tar xf "$tarball" -C "$src" --strip-components=1
cd "$src"
log "configure (prefix $prefix)"
./configure "${config_flags[@]}" >"$src/configure.out" 2>&1 || {
  tail -30 "$src/configure.out" >&2
  die "configure failed (full output: $src/configure.out)"
}
log "make -j${JOBS:-$(nproc)}"
make -j"${JOBS:-$(nproc)}" >"$src/make.out" 2>&1 || {
  tail -40 "$src/make.out" >&2
  die "make failed (full output: $src/make.out)"
}
make install >"$src/install.out" 2>&1 || {
  tail -20 "$src/install.out" >&2
  die "make install failed (full output: $src/install.out)"
}
# The PMI2 client library (libpmi2) lives in contrib: the PMI2 rendezvous dlopens it.
make -C contribs/pmi2 install >>"$src/install.out" 2>&1 || log "warning: contribs/pmi2 did not install"
cd "$root"
rm -rf "$src"
printf '%s\n' "${config_flags[*]}" >"$prefix/.complete"
log "Slurm $version built in $(($(date +%s) - start)) s: $prefix"
echo "$prefix"
