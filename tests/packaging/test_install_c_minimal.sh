#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Install libslurm_ddp (runtime + development components only: the SPANK plugin's install
# location is outside any prefix) into a fresh prefix, then build examples/c_minimal against
# it twice: with find_package(slurm_ddp) and with pkg-config. Run both builds once.
set -eu
cmake=$1 build=$2 example=$3 work=$4

# Run PROGRAM as a single process (no launcher variables) into OUT: it must exit 0, and its output
# must show init ("rank 0 of 1") and the all-gather that follows ("hosts: 0=<host>", printed only
# after sddp_allgather succeeded); a failing finalize shows as the exit status. No pipe: a pipe's
# status would be tee's.
run_single() {  # run_single PROGRAM OUT
    rc=0
    env -u RANK -u WORLD_SIZE -u SLURM_PROCID -u SLURM_STEP_ID -u SLURM_JOB_ID -u PMI_RANK \
        -u PMI_SIZE -u OMPI_COMM_WORLD_RANK -u OMPI_COMM_WORLD_SIZE -u LOCAL_RANK \
        "$1" >"$2" 2>&1 || rc=$?
    cat "$2"
    if [ "$rc" -ne 0 ]; then echo "FAIL: $1 exited with status $rc" >&2; exit 1; fi
    grep -q "^rank 0 of 1 " "$2" || { echo "FAIL: $1 did not print 'rank 0 of 1'" >&2; exit 1; }
    grep -q "^hosts: 0=[^ ]" "$2" || { echo "FAIL: $1 printed no all-gathered host list" >&2; exit 1; }
}

rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix
for component in slurm_ddp_runtime slurm_ddp_devel; do
    "$cmake" --install "$build" --prefix "$prefix" --component "$component"
done
test -f "$prefix/include/slurm_ddp/bootstrap.h"
test -f "$prefix/include/slurm_ddp/bootstrap.hpp"
# lib, lib64 or Debian's multiarch lib/<triplet>.
libdir=$(dirname "$(find "$prefix" -name 'libslurm_ddp.so.0' | head -n1)")
test -f "$libdir/libslurm_ddp.so.0"
test -f "$libdir/cmake/slurm_ddp/slurm_ddpConfig.cmake"

# 1. CMake package.
"$cmake" -S "$example" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release
"$cmake" --build "$work/cmake-build"
run_single "$work/cmake-build/c_minimal" "$work/out1.txt"

# 2. pkg-config.
if command -v pkg-config >/dev/null 2>&1; then
    pcdir=$libdir/pkgconfig
    flags=$(PKG_CONFIG_PATH=$pcdir pkg-config --cflags --libs slurm_ddp)
    libdir=$(PKG_CONFIG_PATH=$pcdir pkg-config --variable=libdir slurm_ddp)
    cc -o "$work/c_minimal_pc" "$example/c_minimal.c" $flags -Wl,-rpath,"$libdir"
    run_single "$work/c_minimal_pc" "$work/out2.txt"
fi
echo "packaging OK"
