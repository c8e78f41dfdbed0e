#!/bin/bash
# Bootstrap benchmarks (issue 6): builds bootstrap_bench if needed, runs ours / the floor /
# PyTorch TCPStore / MPI_Bcast over N local ranks and prints one combined table with ratios.
#   bench/run.sh            # N = 2 8 64 256 1024, 5 repetitions (3 at 1024), MPI up to 256
#   bench/run.sh --smoke    # N = 2 8, 1 repetition: for CI, to keep the benchmarks working
# Environment: NS="2,8,64" REPS=5 REPS_LARGE=3 MPI_NS="2 8 64 256" MPI_REPS=3
#   SDDP_BENCH_BUILD=<build dir> (default build-bench) TORCH_PY=/usr/bin/python3
#   RESULTS=<file> (default $SDDP_BENCH_BUILD/bench/results.txt)
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${SDDP_BENCH_BUILD:-$ROOT/build-bench}
SMOKE=0
[[ ${1:-} == --smoke ]] && SMOKE=1
if ((SMOKE)); then
    NS=2,8; REPS=1; REPS_LARGE=1; MPI_NS="2 8"; MPI_REPS=1
else
    NS=${NS:-2,8,64,256,1024}; REPS=${REPS:-5}; REPS_LARGE=${REPS_LARGE:-3}
    MPI_NS=${MPI_NS:-"2 8 64 256"}; MPI_REPS=${MPI_REPS:-3}
fi
TORCH_PY=${TORCH_PY:-/usr/bin/python3}

if [[ ! -f $BUILD/CMakeCache.txt ]]; then
    cmake -S "$ROOT" -B "$BUILD" -DSDDP_BUILD_BENCH=ON -DSDDP_BUILD_EXAMPLES=OFF \
        -DSDDP_BUILD_TESTS=OFF >/dev/null || exit 1
fi
cmake --build "$BUILD" -j"$(nproc)" --target bootstrap_bench >/dev/null || exit 1
mkdir -p "$BUILD/bench"
RESULTS=${RESULTS:-$BUILD/bench/results.txt}
: >"$RESULTS"
rc=0

echo "== ours and the floor (bootstrap_bench) =="
"$BUILD/bench/bootstrap_bench" --ns "$NS" --reps "$REPS" --reps-large "$REPS_LARGE" \
    | tee -a "$RESULTS" | grep -v '^RESULT' || rc=1

echo "== PyTorch TCPStore (tcpstore_bench.py) =="
if "$TORCH_PY" -c 'import torch.distributed' 2>/dev/null; then
    "$TORCH_PY" "$ROOT/bench/tcpstore_bench.py" --ns "$NS" --reps "$REPS" \
        --reps-large "$REPS_LARGE" | tee -a "$RESULTS" | grep -v '^RESULT' || rc=1
else
    echo "no torch in $TORCH_PY: TCPStore skipped"
    for n in ${NS//,/ }; do echo "SKIP impl=tcpstore n=$n no torch" >>"$RESULTS"; done
fi

echo "== MPI_Bcast (mpi_bcast.c) =="
if command -v mpicc >/dev/null && command -v mpirun >/dev/null; then
    mpicc -O2 -o "$BUILD/bench/mpi_bcast" "$ROOT/bench/mpi_bcast.c" || rc=1
    root_flag=()
    [[ $(id -u) == 0 ]] && root_flag=(--allow-run-as-root)
    for n in $MPI_NS; do
        for _ in $(seq "$MPI_REPS"); do
            # SDDP_BENCH_T0: CLOCK_MONOTONIC just before exec'ing mpirun (for the launch column).
            python3 -c 'import os, sys, time
os.environ["SDDP_BENCH_T0"] = repr(time.monotonic())
os.execvp(sys.argv[1], sys.argv[1:])' timeout 300 mpirun --oversubscribe "${root_flag[@]}" \
                -np "$n" "$BUILD/bench/mpi_bcast" 2>&1 | grep '^MPIRUN' | tee -a "$RESULTS" \
                || { echo "mpirun -np $n failed"; rc=1; }
        done
    done
    for n in ${NS//,/ }; do
        [[ " $MPI_NS " == *" $n "* ]] || echo "SKIP impl=mpi n=$n not run (mpirun of $n ranks on $(nproc) cores is too heavy)" >>"$RESULTS"
    done
else
    echo "no mpicc/mpirun (apt-get install libopenmpi-dev openmpi-bin): MPI skipped"
    for n in ${NS//,/ }; do echo "SKIP impl=mpi n=$n no MPI installed" >>"$RESULTS"; done
fi

echo
echo "== combined ($(nproc) cores, $(uname -r), results in $RESULTS) =="
python3 "$ROOT/bench/report.py" "$RESULTS"
exit $rc
