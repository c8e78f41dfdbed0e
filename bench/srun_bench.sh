#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Real-launch bootstrap benchmark: the library under `srun --ddp` on the local Slurm
# cluster, over TCP (the plugin's MASTER_ADDR/MASTER_PORT and per-step secret) and over PMI2
# (`srun --ddp --mpi=pmi2`: no port, Slurm's key-value space) or PMIx (`--mpi=pmix`). Every task
# sleeps until a common start time, then runs sddp_init (no NCCL: identity, rendezvous,
# preflight) and a 128-byte broadcast from rank 0 (bench/srun_rank.c). Reported per point: the
# LAST rank's time from the start to init done and to holding the id, median (min-max) over REPS
# repetitions.
#
#   tests/cluster/cluster.sh up  (NODE_CPUS >= N/2 for the largest N, e.g. NODE_CPUS=512)
#   bash bench/srun_bench.sh     # NS="2 8 64 256 1024" REPS=5 TRANSPORTS="tcp pmi2" (or pmix)
#
# srun_rank comes from SDDP_BENCH_BUILD (default build-bench; built here if missing). A
# repetition where some task started after the start time (srun still launching) is repeated
# with twice the head start. Output: a table, plus a machine-readable line per point:
#   SRUN impl=srun-<transport> n=N reps=R init_med= init_min= init_max= id_med= id_min= id_max=
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${SDDP_BENCH_BUILD:-$ROOT/build-bench}
SDDP_CLUSTER_DIR=${SDDP_CLUSTER_DIR:-/tmp/slurm-ddp-cluster}
NS=${NS:-"2 8 64 256 1024"}
REPS=${REPS:-5}
TRANSPORTS=${TRANSPORTS:-"tcp pmi2"}
[[ -f $SDDP_CLUSTER_DIR/env.sh ]] || { echo "no cluster at $SDDP_CLUSTER_DIR: run tests/cluster/cluster.sh up" >&2; exit 1; }
# shellcheck disable=SC1091
source "$SDDP_CLUSTER_DIR/env.sh"
if [[ ! -x $BUILD/bench/srun_rank ]]; then
    [[ -f $BUILD/CMakeCache.txt ]] || cmake -S "$ROOT" -B "$BUILD" -DSDDP_BUILD_BENCH=ON \
        -DSDDP_BUILD_EXAMPLES=OFF -DSDDP_BUILD_TESTS=OFF >/dev/null || exit 1
    cmake --build "$BUILD" -j"$(nproc)" --target srun_rank >/dev/null || exit 1
fi
BIN=$BUILD/bench/srun_rank

one_rep() {  # transport n head_start -> prints "init id" (seconds) or "LATE" / "FAIL"
    local transport=$1 n=$2 head=$3 out start mpi=()
    out=$(mktemp -d /tmp/sddp-srun-bench.XXXXXX)
    [[ $transport == pmi2 || $transport == pmix ]] && mpi=(--mpi=$transport)
    start=$(python3 -c "import time; print('%.6f' % (time.time() + $head))")
    if ! SDDP_BENCH_START=$start SDDP_BENCH_OUT=$out SLURM_DDP_TRANSPORT=$transport \
        timeout 300 srun --ddp "${mpi[@]}" -N2 -n"$n" --export=ALL "$BIN" >/dev/null 2>"$out.err"; then
        echo "FAIL $(tail -c 300 "$out.err" | tr '\n' ' ')"
        rm -rf "$out" "$out.err"
        return
    fi
    python3 - "$out" "$n" "$transport" <<'PY'
import os, sys
d, n, transport = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rows = [dict(kv.split("=", 1) for kv in open(os.path.join(d, f)).read().split()) for f in os.listdir(d)]
if len(rows) != n or any(r["transport"] != transport for r in rows):
    print("FAIL %d of %d ranks reported, transports %s" % (len(rows), n, sorted({r["transport"] for r in rows})))
elif max(float(r["late"]) for r in rows) > 0:
    print("LATE")
else:
    print("%.6f %.6f" % (max(float(r["init"]) for r in rows), max(float(r["id"]) for r in rows)))
PY
    rm -rf "$out" "$out.err"
}

stats() {  # stdin: values -> "median min max"
    sort -g | awk '{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.6f %.6f %.6f", m, v[1], v[NR] }'
}

printf '%-11s %6s  %-28s %-28s\n' impl N "init: median (min-max) ms" "id: median (min-max) ms"
rc=0
for transport in $TRANSPORTS; do
    for n in $NS; do
        inits=""; ids=""; ok=0; why=""
        head=$(awk -v n="$n" 'BEGIN { print 1.5 + n / 200 }')
        for _ in $(seq "$REPS"); do
            for _try in 1 2 3; do
                r=$(one_rep "$transport" "$n" "$head")
                [[ $r == LATE ]] || break
                head=$(awk -v h="$head" 'BEGIN { print h * 2 }')
            done
            if [[ $r =~ ^[0-9.]+\ [0-9.]+$ ]]; then
                inits+="${r% *}"$'\n'; ids+="${r#* }"$'\n'; ok=$((ok + 1))
            else
                why=$r
            fi
        done
        if ((ok == 0)); then
            printf '%-11s %6d  FAILED: %s\n' "srun-$transport" "$n" "$why"
            echo "SRUN impl=srun-$transport n=$n reps=$REPS ok=0"
            rc=1
            continue
        fi
        read -r im imin imax <<<"$(grep . <<<"$inits" | stats)"
        read -r dm dmin dmax <<<"$(grep . <<<"$ids" | stats)"
        ms() { awk -v x="$1" 'BEGIN { printf "%.1f", x * 1000 }'; }
        printf '%-11s %6d  %-28s %-28s\n' "srun-$transport" "$n" \
            "$(ms "$im") ($(ms "$imin")-$(ms "$imax"))" "$(ms "$dm") ($(ms "$dmin")-$(ms "$dmax"))"
        echo "SRUN impl=srun-$transport n=$n reps=$REPS ok=$ok init_med=$im init_min=$imin init_max=$imax id_med=$dm id_min=$dmin id_max=$dmax"
    done
done
echo "(last rank's time from the common start; $(nproc) cores; cluster: $SDDP_CLUSTER_NODELIST; head start 1.5 s + N/200 s, doubled when a task started late)"
exit $rc
