#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Reruns every table of docs/performance.md: each part writes a raw file with the header of
# bench/lib/raw_header.sh (commit, date, machine, command) under OUT, and the tables are printed
# from those files by bench/report.py at the end.
#   bash bench/run-all.sh                # local parts only: harness + micro, scale model (~10 min)
#   bash bench/run-all.sh --cluster      # + the parts on the running 2-node cluster (shared lock)
#   bash bench/run-all.sh --many-nodes   # + real srun on its own 2- and 32-node clusters
#   bash bench/run-all.sh --quick ...    # smoke sizes everywhere (numbers mean nothing)
# Parts and what they need:
#   harness   bench/run.sh: ours / floors / TCPStore / MPI over N local ranks, and the micro
#             benchmarks (frame MAC, libcrypto's set-up). This machine only.   -> harness-DATE.txt
#   model     bench/model/scale_model.py on the harness file (and on the many-nodes file when
#             that ran): 10k/100k predictions, errors per measured point.     -> scale-model-DATE.txt
#   transports (--cluster) bench/srun/srun_bench.sh on the running cluster at SDDP_CLUSTER_DIR
#             (default /tmp/slurm-ddp-cluster; 2 nodes x 8 CPUs): TCP, PMI2, PMIx at N = 2, 8,
#             16 under one short holding of /tmp/sddp-cluster.lock (~3 min).  -> srun-transports-DATE.txt
#   overhead  (--cluster) bench/overhead/plugin_overhead.sh on the same cluster (the plugin's own
#             per-hook time needs it up with SLURM_DEBUG=verbose), REPS=100, locked (~5 min)
#                                                                           -> plugin-overhead-DATE.txt
#   e2e       (--cluster) bench/e2e/e2e_launch.sh --running: srun --ddp against torchrun and
#             Lightning at 2x2 and 2x8, torch 2.15 environment, locked (~7 min) -> e2e-DATE/ + .txt
#   many      (--many-nodes) bench/srun/srun_bench.sh --all: brings a 2-node and then a 32-node
#             cluster up and down itself (NODE_CPUS 512: 1024 tasks), so no other cluster may be
#             up on the machine: root, a machine of your own, ~12 min, ~8 GiB.
#                                                                           -> srun-results-DATE.txt
# Environment: OUT (default bench/results), SDDP_BENCH_BUILD (default build-bench),
#   SDDP_CLUSTER_DIR, PLUGIN (the spank_ddp.so the cluster parts load; default the bench build's),
#   RESTORE_PLUGIN (the one to put back after each locked part; default the one found there).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$ROOT/bench/results}
BUILD=${SDDP_BENCH_BUILD:-$ROOT/build-bench}
export SDDP_BENCH_BUILD=$BUILD
CLUSTER_DIR=${SDDP_CLUSTER_DIR:-/tmp/slurm-ddp-cluster}
LOCK=/tmp/sddp-cluster.lock
CLUSTER=0 MANY=0 QUICK=0
for a in "$@"; do
    case $a in
        --cluster) CLUSTER=1 ;;
        --many-nodes) MANY=1 ;;
        --quick) QUICK=1 ;;
        -h | --help) sed -n 2,32p "$0"; exit 0 ;;
        *) echo "unknown argument $a (--cluster, --many-nodes, --quick, --help)" >&2; exit 2 ;;
    esac
done
# shellcheck source=bench/lib/raw_header.sh
source "$ROOT/bench/lib/raw_header.sh"
day=$(date -u +%F)
mkdir -p "$OUT"
failed=()
written=()

echo "== harness and micro benchmarks (bench/run.sh) =="
harness=$OUT/harness-$day.txt
if ((QUICK)); then
    RESULTS=$harness bash "$ROOT/bench/run.sh" --smoke || failed+=(harness)
else
    RESULTS=$harness bash "$ROOT/bench/run.sh" || failed+=(harness)
fi
written+=("$harness")

if ((MANY)); then
    echo "== real srun on 2 and 32 nodes, own clusters (bench/srun/srun_bench.sh --all) =="
    many=$OUT/srun-results-$day.txt
    args=(--all)
    ((QUICK)) && args+=(--quick)
    RESULTS=$many bash "$ROOT/bench/srun/srun_bench.sh" "${args[@]}" || failed+=(many-nodes)
    written+=("$many")
fi

echo "== scale model (bench/model/scale_model.py) =="
model_in=$harness
[[ -n ${many:-} && -s ${many:-} ]] && model_in=$many
if python3 "$ROOT/bench/model/scale_model.py" "$model_in" --out "$OUT/scale-model-$day.txt"; then
    written+=("$OUT/scale-model-$day.txt")
elif ((QUICK)); then
    echo "(the smoke sizes are too few to calibrate the model: skipped)"
    rm -f "$OUT/scale-model-$day.txt"
else
    failed+=(model)
fi

if ((CLUSTER)); then
    [[ -f $CLUSTER_DIR/env.sh ]] || { echo "no cluster at $CLUSTER_DIR (tests/cluster/cluster.sh up)" >&2; exit 1; }
    PLUGIN=${PLUGIN:-$BUILD/spank_plugin/spank_ddp.so}
    cmake --build "$BUILD" --target spank_ddp srun_rank >/dev/null || { echo "building the plugin failed" >&2; exit 1; }
    # The cluster is shared: load our plugin only inside each locked section, and put back
    # the one that was there when the section began (RESTORE_PLUGIN: that one instead).
    locked() {  # command... : under the lock, with our plugin loaded, then the previous one back
        # shellcheck disable=SC2016 # expanded by the inner shell
        flock -o "$LOCK" env SDDP_CLUSTER_DIR="$CLUSTER_DIR" bash -c '
            cl=$1 plugin=$2 before=$3; shift 3
            [[ -n $before ]] || before=$(sed -n "s/^required[[:space:]]\+//p" \
                "$SDDP_CLUSTER_DIR/plugstack.conf" | head -n 1)
            bash "$cl" plugin "$plugin" >/dev/null 2>&1 || exit 1
            "$@"; rc=$?
            [[ -z $before ]] || bash "$cl" plugin "$before" >/dev/null 2>&1
            exit $rc' _ "$ROOT/tests/cluster/cluster.sh" "$PLUGIN" "${RESTORE_PLUGIN:-}" "$@"
    }
    echo "== TCP, PMI2 and PMIx under srun --ddp on the running cluster (bench/srun/srun_bench.sh) =="
    tr=$OUT/srun-transports-$day.txt
    ns="16 8 2" reps=5
    ((QUICK)) && ns="8" reps=1
    locked env SRUN_NODES=2 NS="$ns" TRANSPORTS="tcp pmi2 pmix" REPS=$reps timeout 400 \
        bash "$ROOT/bench/srun/srun_bench.sh" >"$tr" 2>&1 || failed+=(transports)
    written+=("$tr")

    echo "== plugin overhead on step launch (bench/overhead/plugin_overhead.sh) =="
    oh=$OUT/plugin-overhead-$day.txt
    reps=100
    ((QUICK)) && reps=5
    rm -f "$OUT/plugin-overhead-launches-$day.txt"
    locked env REPS=$reps RAW="$OUT/plugin-overhead-launches-$day.txt" timeout 590 \
        bash "$ROOT/bench/overhead/plugin_overhead.sh" >"$oh" 2>&1 || failed+=(overhead)
    written+=("$oh" "$OUT/plugin-overhead-launches-$day.txt")

    echo "== end to end: srun --ddp against torchrun and Lightning (bench/e2e/e2e_launch.sh) =="
    e2e=$OUT/e2e-$day
    e2e_args=(--running)
    ((QUICK)) && e2e_args+=(--quick)
    rm -rf "$e2e"
    locked env RESULTS="$e2e" PLUGIN="$PLUGIN" timeout 590 \
        bash "$ROOT/bench/e2e/e2e_launch.sh" "${e2e_args[@]}" >"$e2e.txt" 2>&1 || failed+=(e2e)
    written+=("$e2e.txt")
fi

echo
echo "== tables, from the raw files =="
python3 "$ROOT/bench/report.py" harness "$harness" || failed+=(report-harness)
[[ -n ${many:-} ]] && { python3 "$ROOT/bench/report.py" srun "$many" || failed+=(report-srun); }
if ((CLUSTER)); then
    python3 "$ROOT/bench/report.py" srun "$tr" || failed+=(report-transports)
    python3 "$ROOT/bench/report.py" overhead "$OUT/plugin-overhead-launches-$day.txt" || failed+=(report-overhead)
    python3 "$ROOT/bench/report.py" e2e "$e2e" || failed+=(report-e2e)
fi
echo
echo "raw files (each starts with its header):"
printf '  %s\n' "${written[@]}"
if ((${#failed[@]})); then
    echo "bench/run-all.sh: FAILED: ${failed[*]}"
    exit 1
fi
((CLUSTER)) || echo "not run: the cluster parts (--cluster) and 32 nodes (--many-nodes)"
