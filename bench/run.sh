#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The local harness (bench/harness/): builds the benchmarks if needed, runs ours / the
# authenticated floor / the bare floor / PyTorch TCPStore / MPI_Bcast over N local ranks and
# prints one combined table with ratios
# (bench/report.py harness); the micro benchmarks (bench/micro/: one frame MAC, libcrypto's set-up);
# then, where a GPU is visible, exec -> ready one-rank NCCL communicator through the library
# versus CUDA + NCCL called directly (nccl_init_bench).
#   bench/run.sh            # N = 2 8 64 256 1024, 5 repetitions (3 at 1024), MPI up to 256
#   bench/run.sh --smoke    # N = 2 8, 1 repetition: for CI (scripts/test.sh's bench phase), to
#                           # keep the benchmarks building and running; exits 1 if any part fails
# Environment: VARIANTS=ours-2level,...,authfloor-tree-barrier (bootstrap_bench's; default all) NS="2,8,64" REPS=5 REPS_LARGE=3 MPI_NS="2 8 64 256" MPI_REPS=3 NCCL_REPS=10
#   SDDP_BENCH_BUILD=<build dir> (default build-bench) TORCH_PY=<python with torch> (default:
#   scripts/framework-env.sh torch)
#   SDDP_BENCH_BUILD_TYPE=<CMAKE_BUILD_TYPE for a new build dir> (default RelWithDebInfo; the CI
#   smoke run uses Debug, which compiles about 30% faster: its numbers mean nothing anyway)
#   RESULTS=<file> (default $SDDP_BENCH_BUILD/bench/results.txt; starts with the raw-file header)
#   SDDP_BENCH_E2E=1: also bench/e2e/e2e_launch.sh (--quick with --smoke), which takes the cluster lock
#   and brings the local 2-node Slurm cluster up and down
# A part that cannot run here (no torch, no MPI, no GPU or no NCCL in the build) says so and is
# skipped without failing.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${SDDP_BENCH_BUILD:-$ROOT/build-bench}
SMOKE=0
[[ ${1:-} == --smoke ]] && SMOKE=1
# shellcheck source=bench/lib/raw_header.sh
source "$ROOT/bench/lib/raw_header.sh"
if ((SMOKE)); then
    NS=2,8; REPS=1; REPS_LARGE=1; MPI_NS="2 8"; MPI_REPS=1; NCCL_REPS=1; NCCL_WARMUP=0
else
    NS=${NS:-2,8,64,256,1024}; REPS=${REPS:-5}; REPS_LARGE=${REPS_LARGE:-3}
    MPI_NS=${MPI_NS:-"2 8 64 256"}; MPI_REPS=${MPI_REPS:-3}
    NCCL_REPS=${NCCL_REPS:-10}; NCCL_WARMUP=1
fi
# The competitor is the TCPStore users run today: torch 2.15's (libuv server) from the pinned
# environment; TORCH_PY=/usr/bin/python3 measures Debian's torch 1.13 instead.
if [[ -z ${TORCH_PY:-} ]]; then
    TORCH_PY=$(bash "$ROOT/scripts/framework-env.sh" torch)/bin/python || TORCH_PY=/usr/bin/python3
fi
failed=()
skipped=()

# bench/targets.txt (written at configure) lists the benchmarks this build has: nccl_init_bench
# only where the library has its NCCL layer.
if [[ ! -f $BUILD/CMakeCache.txt ]]; then
    cmake -S "$ROOT" -B "$BUILD" -DSDDP_BUILD_BENCH=ON -DSDDP_BUILD_EXAMPLES=OFF \
        -DSDDP_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE="${SDDP_BENCH_BUILD_TYPE:-RelWithDebInfo}" \
        >/dev/null || exit 1
elif [[ ! -f $BUILD/bench/targets.txt ]]; then  # configured before targets.txt existed
    cmake -S "$ROOT" -B "$BUILD" -DSDDP_BUILD_BENCH=ON >/dev/null || exit 1
fi
build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$BUILD/CMakeCache.txt")
if ((!SMOKE)) && [[ $build_type != Rel* ]]; then
    echo "warning: $BUILD is a '$build_type' build: its timings are not representative" \
        "(use another SDDP_BENCH_BUILD)" >&2
fi
mapfile -t targets < <(grep -v '^$' "$BUILD/bench/targets.txt")
if [[ " ${targets[*]} " != *" bootstrap_bench "* ]]; then
    echo "bench/run.sh: bootstrap_bench is not in this build ($BUILD/bench/targets.txt)" >&2
    exit 1
fi
# Quiet unless it fails: then the compiler's messages are what matters.
if ! build_log=$(cmake --build "$BUILD" -j"$(nproc)" --target "${targets[@]}" 2>&1); then
    printf '%s\n' "$build_log" | tail -n 60
    echo "bench/run.sh: building ${targets[*]} failed" >&2
    exit 1
fi
mkdir -p "$BUILD/bench"
RESULTS=${RESULTS:-$BUILD/bench/results.txt}
raw_header "${VARIANTS:+VARIANTS=$VARIANTS }bash bench/run.sh $* (NS=$NS REPS=$REPS REPS_LARGE=$REPS_LARGE MPI_NS=\"$MPI_NS\" MPI_REPS=$MPI_REPS build: $build_type)" | tee "$RESULTS"

echo "== ours and the floor (bootstrap_bench) =="
"$BUILD/bench/bootstrap_bench" ${VARIANTS:+--variants "$VARIANTS"} --ns "$NS" --reps "$REPS" --reps-large "$REPS_LARGE" \
    | tee -a "$RESULTS" | grep -v '^RESULT' || failed+=(bootstrap_bench)

echo "== one frame MAC: keyed per MAC / from the connection's prepared key (mac_cost) =="
"$BUILD/bench/mac_cost" || failed+=(mac_cost)
if [[ " ${targets[*]} " == *" libcrypto_setup "* ]]; then
    echo "== libcrypto's one-time set-up in a fresh process, CPU ms (libcrypto_setup) =="
    "$BUILD/bench/libcrypto_setup" setup || failed+=(libcrypto_setup)
fi

echo "== PyTorch TCPStore (tcpstore_bench.py) =="
if "$TORCH_PY" -c 'import torch.distributed' 2>/dev/null; then
    "$TORCH_PY" "$ROOT/bench/harness/tcpstore_bench.py" --ns "$NS" --reps "$REPS" \
        --reps-large "$REPS_LARGE" | tee -a "$RESULTS" | grep -v '^RESULT' || failed+=(tcpstore)
else
    echo "no torch in $TORCH_PY: TCPStore skipped"
    skipped+=("TCPStore (no torch)")
    for n in ${NS//,/ }; do echo "SKIP impl=tcpstore n=$n no torch" >>"$RESULTS"; done
fi

echo "== MPI_Bcast (mpi_bcast.c) =="
if [[ " ${targets[*]} " == *" mpi_bcast "* ]] && command -v mpirun >/dev/null; then
    root_flag=()
    [[ $(id -u) == 0 ]] && root_flag=(--allow-run-as-root)
    mpi_log=$BUILD/bench/mpirun.log
    for n in $MPI_NS; do
        for _ in $(seq "$MPI_REPS"); do
            # SDDP_BENCH_T0: CLOCK_MONOTONIC just before exec'ing mpirun (for the launch column).
            if python3 -c 'import os, sys, time
os.environ["SDDP_BENCH_T0"] = repr(time.monotonic())
os.execvp(sys.argv[1], sys.argv[1:])' timeout 300 mpirun --oversubscribe "${root_flag[@]}" \
                -np "$n" "$BUILD/bench/mpi_bcast" >"$mpi_log" 2>&1 &&
                grep '^MPIRUN' "$mpi_log" | tee -a "$RESULTS"; then
                :
            else
                echo "mpirun -np $n failed; its output:"; tail -n 30 "$mpi_log"
                [[ " ${failed[*]} " == *" mpi "* ]] || failed+=(mpi)
            fi
        done
    done
    for n in ${NS//,/ }; do
        [[ " $MPI_NS " == *" $n "* ]] || echo "SKIP impl=mpi n=$n not run (mpirun of $n ranks on $(nproc) cores is too heavy)" >>"$RESULTS"
    done
else
    echo "no MPI in this build or no mpirun (apt-get install libopenmpi-dev openmpi-bin, then" \
        "reconfigure): MPI skipped"
    skipped+=("MPI (not installed)")
    for n in ${NS//,/ }; do echo "SKIP impl=mpi n=$n no MPI installed" >>"$RESULTS"; done
fi

echo
echo "== combined ($(nproc) cores, $(uname -r), results in $RESULTS) =="
python3 "$ROOT/bench/report.py" harness "$RESULTS" || failed+=(report)

echo
echo "== one-rank NCCL communicator: library versus CUDA + NCCL directly (nccl_init_bench) =="
if [[ " ${targets[*]} " != *" nccl_init_bench "* ]]; then
    echo "nccl_init_bench skipped: this build has no NCCL layer (CUDA/NCCL not found under" \
        "SDDP_CUDA_ROOT, or -DSDDP_WITH_NCCL=OFF)"
    skipped+=("nccl_init_bench (no NCCL in this build)")
else
    nccl_args=(--reps "$NCCL_REPS" --warmup "$NCCL_WARMUP")
    if ! command -v nvidia-smi >/dev/null; then
        gpu_why="nvidia-smi is not installed"
    elif ! gpu_out=$(nvidia-smi -L 2>&1); then
        gpu_why="nvidia-smi -L failed: $(head -n 1 <<<"$gpu_out")"
    else
        gpu_why=""
        printf '%s\n' "$gpu_out"
    fi
    if [[ -z $gpu_why ]]; then
        # A GPU is visible: anything but a full run (a SKIP included) is a failure.
        if ! "$BUILD/bench/nccl_init_bench" "${nccl_args[@]}" | tee "$BUILD/bench/nccl_init.txt" \
            || grep -q '^SKIP' "$BUILD/bench/nccl_init.txt"; then
            failed+=(nccl_init_bench)
        fi
    elif ((SMOKE)); then
        # No GPU: the smoke run still checks that the program starts and says why it skips.
        echo "no GPU ($gpu_why); checking that nccl_init_bench skips cleanly:"
        "$BUILD/bench/nccl_init_bench" "${nccl_args[@]}" || failed+=(nccl_init_bench)
        skipped+=("nccl_init_bench (no GPU: $gpu_why)")
    else
        echo "nccl_init_bench skipped: no GPU ($gpu_why)"
        skipped+=("nccl_init_bench (no GPU: $gpu_why)")
    fi
fi

echo
echo "== end to end on the 2-node cluster: srun --ddp / torchrun / Lightning (e2e/e2e_launch.sh) =="
# Needs root, the shared cluster lock and a cluster of its own, and imports torch a dozen times:
# run only when asked (bench/e2e/e2e_launch.sh runs the full comparison on its own).
if [[ ${SDDP_BENCH_E2E:-0} == 1 ]]; then
    e2e_args=()
    ((SMOKE)) && e2e_args=(--quick)
    bash "$ROOT/bench/e2e/e2e_launch.sh" "${e2e_args[@]}" || failed+=(e2e_launch)
else
    echo "skipped: it brings the local Slurm cluster up (SDDP_BENCH_E2E=1 runs it here)"
    skipped+=("e2e_launch (needs the cluster: SDDP_BENCH_E2E=1)")
fi

echo
if ((${#failed[@]})); then
    echo "bench/run.sh: FAILED: ${failed[*]}"
    exit 1
fi
if ((${#skipped[@]})); then
    echo "bench/run.sh: passed, but not everything ran; skipped: ${skipped[*]}"
else
    echo "bench/run.sh: every benchmark ran"
fi
