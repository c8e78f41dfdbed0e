#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Real-launch bootstrap benchmark: the library under `srun --ddp` on the local Slurm cluster,
# over TCP (the plugin's MASTER_ADDR/MASTER_PORT and per-step secret), PMI2
# (`srun --ddp --mpi=pmi2`: no port, Slurm's key-value space) and PMIx (`--mpi=pmix`). Every task
# sleeps until a common start time, then runs sddp_init (no NCCL: identity, rendezvous,
# preflight) and two 128-byte broadcasts from rank 0 (bench/srun_rank.c).
#
# The one command (under ONE holding of the shared cluster lock, brings a 2-node and then a
# 32-node cluster up, runs at most BUDGET_S seconds of points on each and brings it down; then
# runs the fork harness and the bare-socket floors for the same N; prints the table and the
# goals; about 12 minutes on the 2-core machine, of which ~10 under the lock):
#   bash bench/srun/srun_bench.sh --all            # NODES_LIST="2 32" NS="1024 256 64" REPS=3
#   bash bench/srun/srun_bench.sh --all --quick    # smoke: 2 nodes, N = 8 and 64, 1 repetition
# Output goes to stdout and to RESULTS (default /tmp/srun-bench-<time>.txt);
# `python3 bench/report.py srun RESULTS` prints the table again from that file.
#
# Points only, on a cluster that is already up (NODE_CPUS >= N / nodes):
#   SRUN_NODES=2 NS="64 1024" TRANSPORTS="tcp pmi2 pmix" REPS=3 bash bench/srun/srun_bench.sh
#
# SDDP_BENCH_LIB_DIR: run the tasks with that directory first in LD_LIBRARY_PATH (another
# build's libslurm_ddp.so, for a before/after in one cluster session); SDDP_BENCH_LABEL is
# appended to the impl name.
# srun_rank and bootstrap_bench come from SDDP_BENCH_BUILD (default build-bench; built here if
# missing). A repetition where some task started after the start time (srun still launching)
# is repeated with twice the head start. Per point, a machine-readable line (seconds, medians
# over the repetitions of each repetition's figure):
#   SRUN impl=srun-<transport> nodes=K n=N reps=R ok=O init_med= init_min= init_max= id_med=
#        id_min= id_max= id2_med= launch_last= launch_skew= cpu_init= cpu_id= stepd_cpu=
# init / id / id2: the LAST rank's time from the start to init done / the first broadcast /
# the second; launch_last: srun invoked -> the last task's main() (Slurm's launch);
# launch_skew: first to last task's main(); cpu_init / cpu_id: CPU seconds of all tasks
# together from the start to init done / id held (what sddp_init and the broadcast cost); stepd_cpu: CPU seconds the step's slurmstepds
# used from the first task's main() to the last task's second broadcast.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${SDDP_BENCH_BUILD:-$ROOT/build-bench}
# shellcheck source=bench/lib/raw_header.sh
source "$ROOT/bench/lib/raw_header.sh"
SDDP_CLUSTER_DIR=${SDDP_CLUSTER_DIR:-/tmp/slurm-ddp-cluster}
NS=${NS:-"1024 256 64"}  # largest first: the budget cuts the small ones
REPS=${REPS:-3}
TRANSPORTS=${TRANSPORTS:-"tcp pmi2 pmix"}
SRUN_NODES=${SRUN_NODES:-2}
NODES_LIST=${NODES_LIST:-"2 32"}
BUDGET_S=${BUDGET_S:-240}  # per node count: points not started by then are skipped
HARNESS_NS=${HARNESS_NS:-}
LOCK=${SDDP_CLUSTER_LOCK:-/tmp/sddp-cluster.lock}
mode=points
for a in "$@"; do
    case $a in
        --all) mode=all ;;
        --quick) NS="64 8"; REPS=1; NODES_LIST=2; BUDGET_S=60 ;;
        -h | --help) sed -n 2,32p "$0"; exit 0 ;;
        *) echo "unknown argument $a (--all, --quick, --help)" >&2; exit 2 ;;
    esac
done

build() {  # targets...
    local missing=()
    for t in "$@"; do [[ -x $BUILD/bench/$t ]] || missing+=("$t"); done
    ((${#missing[@]})) || return 0
    [[ -f $BUILD/CMakeCache.txt ]] || cmake -S "$ROOT" -B "$BUILD" -DSDDP_BUILD_BENCH=ON \
        -DSDDP_BUILD_EXAMPLES=OFF -DSDDP_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        >/dev/null || exit 1
    cmake --build "$BUILD" -j"$(nproc)" --target "${missing[@]}" spank_ddp >/dev/null || exit 1
}

if [[ $mode == all ]]; then
    build srun_rank bootstrap_bench
    PLUGIN=${PLUGIN:-$BUILD/spank_plugin/spank_ddp.so}
    [[ -f $PLUGIN ]] || cmake --build "$BUILD" --target spank_ddp >/dev/null || exit 1
    RESULTS=${RESULTS:-/tmp/srun-bench-$(date -u +%Y%m%dT%H%M%S).txt}
    max_n=0
    for n in $NS; do ((n > max_n)) && max_n=$n; done
    {
        raw_header "bash bench/srun/srun_bench.sh $*"
        echo "# NODES_LIST=\"$NODES_LIST\" NS=\"$NS\" REPS=$REPS TRANSPORTS=\"$TRANSPORTS\" BUDGET_S=$BUDGET_S"
        # One lock holding from the first `up` to the last `down` (every node count, so that
        # they are measured back to back); per node count, points stop starting after BUDGET_S
        # and `timeout` bounds what a hung step could add.
        echo "# clusters: $NODES_LIST nodes (waiting for $LOCK)"
        flock -o "$LOCK" env NS="$NS" REPS="$REPS" TRANSPORTS="$TRANSPORTS" \
            timeout -k 10 $(((BUDGET_S + 120) * $(wc -w <<<"$NODES_LIST"))) bash -c '
            root=$1 plugin=$2 budget=$3 max_n=$4; shift 4
            cl="$root/tests/cluster/cluster.sh"
            for k in "$@"; do
                cpus=$(((max_n + k - 1) / k)); ((cpus < 8)) && cpus=8
                echo "# cluster: $k nodes x $cpus CPUs, from $(date -u +%T) UTC"
                if NODES=$k NODE_CPUS=$cpus PLUGIN=$plugin UP_TIMEOUT=120 bash "$cl" up >/tmp/srun-bench-up.log 2>&1; then
                    SRUN_NODES=$k SDDP_BENCH_DEADLINE=$(($(date +%s) + budget)) bash "$root/bench/srun/srun_bench.sh"
                else
                    echo "# cluster up failed ($k nodes):"; tail -5 /tmp/srun-bench-up.log
                fi
                bash "$cl" down >/dev/null 2>&1 || echo "# cluster down failed"
            done
        ' _ "$ROOT" "$PLUGIN" "$BUDGET_S" "$max_n" $NODES_LIST
        hns=${HARNESS_NS:-$(echo 8 $NS | tr ' ' '\n' | sort -gu | tr '\n' ' ')}
        echo "# fork harness and floors, N = $hns"
        "$BUILD/bench/bootstrap_bench" --variants ours-preflight,ours-2level,floor,floor-prelisten \
            --ns "$(echo $hns | tr ' ' ',')" --reps "$REPS" --reps-large "$REPS"
        echo "# done $(date -u '+%T') UTC; load: $(cut -d' ' -f1-3 /proc/loadavg)"
    } 2>&1 | tee "$RESULTS"
    echo
    python3 "$ROOT/bench/report.py" srun "$RESULTS"
    echo "(raw results: $RESULTS)"
    exit 0
fi

[[ -f $SDDP_CLUSTER_DIR/env.sh ]] || { echo "no cluster at $SDDP_CLUSTER_DIR: run tests/cluster/cluster.sh up" >&2; exit 1; }
# shellcheck disable=SC1091
source "$SDDP_CLUSTER_DIR/env.sh"
build srun_rank
BIN=$BUILD/bench/srun_rank

one_rep() {  # transport n head_start -> prints the figures of one repetition, "LATE" or "FAIL ..."
    local transport=$1 n=$2 head=$3 out start t0 mpi=()
    out=$(mktemp -d /tmp/sddp-srun-bench.XXXXXX)
    [[ $transport == pmi2 || $transport == pmix ]] && mpi=(--mpi=$transport)
    t0=$(date +%s.%N)
    start=$(awk -v t="$t0" -v h="$head" 'BEGIN { printf "%.6f", t + h }')
    if ! LD_LIBRARY_PATH=${SDDP_BENCH_LIB_DIR:+$SDDP_BENCH_LIB_DIR:}${LD_LIBRARY_PATH:-} \
        SDDP_BENCH_START=$start SDDP_BENCH_OUT=$out SDDP_BENCH_SRUN_T0=$t0 \
        SLURM_DDP_TRANSPORT=$transport timeout 300 srun --ddp "${mpi[@]}" -N"$SRUN_NODES" \
        -n"$n" --export=ALL "$BIN" >/dev/null 2>"$out.err"; then
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
    sys.exit()
if max(float(r["late"]) for r in rows) > 0:
    print("LATE")
    sys.exit()
col = lambda k: [float(r[k]) for r in rows]
stepd = {}
for r in rows:
    c0, c1 = float(r["stepd_cpu0"]), float(r["stepd_cpu1"])
    lo, hi = stepd.get(r["stepd"], (c0, c1))
    stepd[r["stepd"]] = (min(lo, c0), max(hi, c1))
launched = col("launched")
print("%.6f %.6f %.6f %.6f %.6f %.6f %.6f %.6f" % (
    max(col("init")), max(col("id")), max(col("id2")), max(launched), max(launched) - min(launched),
    sum(col("cpu_init")) - sum(col("cpu_start")), sum(col("cpu_id")) - sum(col("cpu_start")), sum(hi - lo for lo, hi in stepd.values())))
PY
    rm -rf "$out" "$out.err"
}

stats() {  # stdin: values -> "median min max"
    sort -g | awk '{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.6f %.6f %.6f", m, v[1], v[NR] }'
}
ms() { awk -v x="$1" 'BEGIN { printf "%.1f", x * 1000 }'; }

# Run on its own, the output is a raw file: it starts with the header (under --all, the outer
# run wrote it).
[[ -n ${SDDP_BENCH_DEADLINE:-} ]] || raw_header "SRUN_NODES=$SRUN_NODES NS=\"$NS\" TRANSPORTS=\"$TRANSPORTS\" REPS=$REPS${SDDP_BENCH_LIB_DIR:+ SDDP_BENCH_LIB_DIR=$SDDP_BENCH_LIB_DIR} bash bench/srun/srun_bench.sh"
printf '%-11s %5s %6s  %-24s %-24s %-9s %-9s\n' impl nodes N "init: med (min-max) ms" \
    "id: med (min-max) ms" "id2 ms" "launch ms"
rc=0
for n in $NS; do
    for transport in $TRANSPORTS; do
        if [[ -n ${SDDP_BENCH_DEADLINE:-} ]] && (($(date +%s) >= SDDP_BENCH_DEADLINE)); then
            printf '%-11s %5d %6d  SKIPPED: over the time budget\n' "srun-$transport${SDDP_BENCH_LABEL:-}" "$SRUN_NODES" "$n"
            echo "SRUN impl=srun-$transport${SDDP_BENCH_LABEL:-} nodes=$SRUN_NODES n=$n reps=$REPS ok=0 skipped=budget"
            continue
        fi
        cols=("" "" "" "" "" "" "" ""); ok=0; why=""
        head=$(awk -v n="$n" 'BEGIN { print 1.5 + n / 200 }')
        for _ in $(seq "$REPS"); do
            for _try in 1 2 3; do
                r=$(one_rep "$transport" "$n" "$head")
                [[ $r == LATE ]] || break
                head=$(awk -v h="$head" 'BEGIN { print h * 2 }')
            done
            if [[ $r =~ ^[0-9.]+(\ [0-9.]+){7}$ ]]; then
                read -ra f <<<"$r"
                for i in "${!f[@]}"; do cols[i]+="${f[i]}"$'\n'; done
                ok=$((ok + 1))
            else
                why=$r
            fi
        done
        if ((ok == 0)); then
            printf '%-11s %5d %6d  FAILED: %s\n' "srun-$transport${SDDP_BENCH_LABEL:-}" "$SRUN_NODES" "$n" "$why"
            echo "SRUN impl=srun-$transport${SDDP_BENCH_LABEL:-} nodes=$SRUN_NODES n=$n reps=$REPS ok=0"
            rc=1
            continue
        fi
        read -r im imin imax <<<"$(grep . <<<"${cols[0]}" | stats)"
        read -r dm dmin dmax <<<"$(grep . <<<"${cols[1]}" | stats)"
        med() { grep . <<<"${cols[$1]}" | stats | cut -d' ' -f1; }
        d2=$(med 2) ll=$(med 3) ls=$(med 4) ci=$(med 5) cd=$(med 6) sc=$(med 7)
        printf '%-11s %5d %6d  %-24s %-24s %-9s %-9s\n' "srun-$transport${SDDP_BENCH_LABEL:-}" "$SRUN_NODES" "$n" \
            "$(ms "$im") ($(ms "$imin")-$(ms "$imax"))" "$(ms "$dm") ($(ms "$dmin")-$(ms "$dmax"))" \
            "$(ms "$d2")" "$(ms "$ll")"
        echo "SRUN impl=srun-$transport${SDDP_BENCH_LABEL:-} nodes=$SRUN_NODES n=$n reps=$REPS ok=$ok init_med=$im init_min=$imin init_max=$imax id_med=$dm id_min=$dmin id_max=$dmax id2_med=$d2 launch_last=$ll launch_skew=$ls cpu_init=$ci cpu_id=$cd stepd_cpu=$sc"
    done
done
echo "(last rank's time from the common start; $(nproc) cores; cluster: $SDDP_CLUSTER_NODELIST; head start 1.5 s + N/200 s, doubled when a task started late)"
exit $rc
