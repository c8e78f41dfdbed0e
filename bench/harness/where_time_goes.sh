#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Where a rank's time goes in the fork harness (bench/harness/bootstrap_bench.cpp), in counts that
# a loaded machine does not blur:
#   - per process and N (perf stat over the whole run, divided by repetitions x (N + 1)): context
#     switches, system calls, connect() calls, sleeps, page faults, CPU ms; for each binary given
#     (to compare two builds of the rendezvous in one run) and for floor-prelisten;
#   - per rank, user-space instructions from the start to holding the id (callgrind, collecting
#     only inside make_tcp_transport and broadcast), and how many of them are in Nettle (its
#     functions, in libnettle.so or linked from libnettle.a); in
#     ours-2level the median rank is a local rank, the 90th percentile a node leader and the
#     maximum rank 0.
#     Valgrind hides SHA-NI, so Nettle runs its portable SHA-256 there; the native cost of one
#     64-byte block is printed beside it.
#   bash bench/harness/where_time_goes.sh BUILD [OTHER_BOOTSTRAP_BENCH...]
# (other builds of bootstrap_bench, labelled other, other2, other3, ... in the order given)
# Env: NS="64 256 1024" REPS=3 CG_N=64 ROUNDS=1 FLOORS="floor-prelisten" (the floors measured
# beside ours, e.g. FLOORS="authfloor-tree floor-prelisten"; ROUNDS > 1 takes turns and adds the
# medians). Needs perf (root, for the syscall tracepoints) and
# valgrind; prints a raw file (header from bench/lib/raw_header.sh) on stdout.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
ARGS="$*"
BUILD=${1:?usage: where_time_goes.sh BUILD [OTHER_BOOTSTRAP_BENCH...]}
shift
OTHERS=("$@")
NS=${NS:-64 256 1024}
REPS=${REPS:-3}
CG_N=${CG_N:-64}
ROUNDS=${ROUNDS:-1}
FLOORS=${FLOORS:-floor-prelisten}
BENCH=$BUILD/bench/bootstrap_bench
# shellcheck source=bench/lib/raw_header.sh
source "$ROOT/bench/lib/raw_header.sh"
raw_header "bash bench/harness/where_time_goes.sh $ARGS (NS=\"$NS\" REPS=$REPS CG_N=$CG_N ROUNDS=$ROUNDS FLOORS=\"$FLOORS\")"
# Both binaries bind their symbols at start either way (bootstrap_bench re-executes itself so).
export LD_BIND_NOW=1
events=context-switches,raw_syscalls:sys_enter,syscalls:sys_enter_connect
events+=,syscalls:sys_enter_clock_nanosleep,page-faults,task-clock

per_process() {  # label binary variant n
    local out
    out=$(perf stat -x, -e "$events" "$2" --variants "$3" --ns "$4" --reps "$REPS" --reps-large "$REPS" 2>&1)
    local id
    id=$(sed -n 's/^RESULT .* id_med=\([0-9.]*\).*/\1/p' <<<"$out")
    awk -F, -v label="$1" -v n="$4" -v reps="$REPS" -v id="$id" '
        $3 ~ /^(context-switches|raw_syscalls:sys_enter|syscalls:sys_enter_connect|syscalls:sys_enter_clock_nanosleep|page-faults|task-clock)$/ {
            v[$3] = $1 / (reps * (n + 1))
        }
        END {
            printf "PERPROC label=%s n=%d id_med_ms=%.2f ctxsw=%.1f syscalls=%.1f connects=%.2f sleeps=%.2f faults=%.1f cpu_ms=%.3f\n",
                label, n, id * 1000, v["context-switches"], v["raw_syscalls:sys_enter"],
                v["syscalls:sys_enter_connect"], v["syscalls:sys_enter_clock_nanosleep"],
                v["page-faults"], v["task-clock"]
        }' <<<"$out"
}

echo "# per process (children and the parent's share), medians of id in ms from the same runs;"
echo "# ROUNDS=$ROUNDS rounds, each running every binary and floor in turn (a machine whose speed"
echo "# drifts weighs on all alike); PERPROC_MEDIAN: the median of each figure over the rounds"
perproc=$(
    for n in $NS; do
        for ((round = 1; round <= ROUNDS; round++)); do
            per_process ours "$BENCH" ours-2level "$n"
            for ((i = 0; i < ${#OTHERS[@]}; i++)); do
                label=other
                ((i > 0)) && label=other$((i + 1))
                per_process "$label" "${OTHERS[i]}" ours-2level "$n"
            done
            for f in $FLOORS; do per_process "$f" "$BENCH" "$f" "$n"; done
        done
    done
)
echo "$perproc"
[[ $ROUNDS -gt 1 ]] && python3 -c '
import collections, statistics, sys
rows = collections.defaultdict(list)
for line in sys.stdin:
    f = dict(x.split("=", 1) for x in line.split()[1:])
    rows[(f.pop("label"), f.pop("n"))].append(f)
for (label, n), runs in rows.items():
    med = {k: statistics.median(float(r[k]) for r in runs) for k in runs[0]}
    print("PERPROC_MEDIAN label=%s n=%s rounds=%d " % (label, n, len(runs)) +
          " ".join("%s=%.3g" % (k, v) for k, v in med.items()))
' <<<"$perproc"

echo "# callgrind, N = $CG_N: user-space instructions per rank from the start to holding the id"
echo "# (the floors: their whole rank, id and all-gather)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for variant in ours-2level $FLOORS; do
    rm -f "$tmp"/cg.*
    valgrind --tool=callgrind --collect-atstart=no "--toggle-collect=sddp::make_tcp_transport*" \
        "--toggle-collect=sddp::tcp::Node::broadcast*" "--toggle-collect=*run_floor*" \
        "--toggle-collect=af_run_rank" \
        --callgrind-out-file="$tmp/cg.%p" "$BENCH" --variants "$variant" --ns "$CG_N" --reps 1 \
        --timeout-ms 100000 >/dev/null 2>&1
    for f in "$tmp"/cg.*; do
        total=$(sed -n 's/^totals: //p' "$f")
        [[ ${total:-0} == 0 ]] && continue
        nettle=$(callgrind_annotate "$f" 2>/dev/null |
            awk '!/=>/ && /nettle/ { gsub(",", "", $1); s += $1 } END { print s + 0 }')
        echo "$total $nettle"
    done | sort -n | awk -v v="$variant" '
        { t[NR] = $1; c[NR] = $2 }
        END {
            m = int((NR + 1) / 2)
            printf "CALLGRIND impl=%s ranks=%d median_ir=%d median_nettle_ir=%d p90_ir=%d p90_nettle_ir=%d max_ir=%d max_nettle_ir=%d\n",
                v, NR, t[m], c[m], t[int(NR * 0.9)], c[int(NR * 0.9)], t[NR], c[NR]
        }'
done
cat >"$tmp/sha.c" <<'EOF'
#include <nettle/sha2.h>
#include <stdio.h>
#include <time.h>
int main(void) {
    static unsigned char buf[65536];
    unsigned char d[32];
    struct sha256_ctx c;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < 2000; i++) {
        sha256_init(&c);
        sha256_update(&c, sizeof buf, buf);
        sha256_digest(&c, sizeof d, d);
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("NETTLE_NATIVE ns_per_block=%.1f\n",
           ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / (2000.0 * 1024));
    return 0;
}
EOF
if cc -O2 "$tmp/sha.c" -o "$tmp/sha" -lnettle 2>/dev/null; then "$tmp/sha"; else echo "NETTLE_NATIVE skipped (no nettle-dev)"; fi
