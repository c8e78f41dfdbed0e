#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# End-to-end launch benchmark on the local 2-node Slurm cluster: from launching the step to
# every rank being past init_process_group("gloo") and one all-reduce, for what users run today
# (torch 2.15 and Lightning 2.6 from the pinned environment of scripts/framework-env.sh):
#   floor    srun e2e_rank.py --floor           import torch and exit: Python/torch start-up
#   a        srun --ddp e2e_rank.py             one task per rank, no launcher
#   b        srun (1 task/node) e2e_seed_wrapper.sh: torchrun per node with its static
#            rendezvous, MASTER_ADDR from `scontrol show hostnames`, a hand-picked port
#   c        srun (1 task/node) e2e_torchrun.sh: torchrun --rdzv_backend=c10d per node
#   d        srun e2e_lightning_rank.py         Lightning's own Slurm path (Fabric, no plugin)
# at 2 nodes x 2 and 2 nodes x 8 ranks, R repetitions, methods interleaved (floor a b c floor a
# b c ...) inside one allocation per size so machine noise and allocation cost fall on all alike.
#
#   bash bench/e2e/e2e_launch.sh            # R=5 at 2x2 and 2x8 (about 5-7 minutes on 2 cores)
#   bash bench/e2e/e2e_launch.sh --quick    # R=1 at 2x2 only: a smoke run, every method works
#   bash bench/e2e/e2e_launch.sh --running  # use the cluster already up at SDDP_CLUSTER_DIR
# Environment: E2E_PYTHON (default: the torch environment's python; /usr/bin/python3 runs
#   Debian's torch 1.13, without method d) R=5 PER_NODE="2 8" PLUGIN=<spank_ddp.so> (default build/spank_plugin/spank_ddp.so,
#   built there if missing) SDDP_CLUSTER_DIR (default /tmp/sddp-e2e) RESULTS=<dir> (raw output
#   of every run; default a new /tmp/sddp-e2e-results.XXXXXX, kept) E2E_RUN_TIMEOUT=120 (one
#   srun) E2E_BUDGET=360 (seconds of rounds in all: fewer than R rounds where the machine is slow)
#
# Without --running it takes the shared cluster lock (/tmp/sddp-cluster.lock), brings the
# cluster up, runs, and brings it down in the same command. Each rank prints wall-clock
# timestamps (e2e_rank.py; the cluster's nodes share the machine's clock); t0 is taken just
# before srun starts. Every run is checked: 2*K result lines, ranks 0..2K-1 once each, world
# size 2K, all-reduce sum 2K. Exit 1 if any run failed. Table by `bench/report.py e2e RESULTS`.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BENCH=$ROOT/bench/e2e
# shellcheck source=bench/lib/raw_header.sh
source "$ROOT/bench/lib/raw_header.sh"
ARGS=("$@")
QUICK=0
RUNNING=0
INNER=""
while (($#)); do
    case $1 in
    --quick) QUICK=1 ;;
    --running) RUNNING=1 ;;
    --inner) INNER=$2; shift ;;  # internal: the loop run inside salloc, for one size
    *) echo "usage: $0 [--quick] [--running]" >&2; exit 2 ;;
    esac
    shift
done
if ((QUICK)); then
    R=${R:-1}; PER_NODE=${PER_NODE:-2}
else
    R=${R:-5}; PER_NODE=${PER_NODE:-"2 8"}
fi
RUN_TIMEOUT=${E2E_RUN_TIMEOUT:-120}
# Seconds of rounds for all sizes together; a round starts only while its size's share is left.
BUDGET=${E2E_BUDGET:-360}
if [[ -z ${E2E_PYTHON:-} ]]; then
    venv=$(bash "$ROOT/scripts/framework-env.sh" torch) || exit 1
    export E2E_PYTHON=$venv/bin/python
fi
PY=$E2E_PYTHON
export E2E_TORCHRUN=${E2E_TORCHRUN:-$(dirname "$PY")/torchrun}
if [[ $PY == /usr/bin/python3 ]]; then
    # Debian's torch 1.13 on Python 3.11: torchrun fails at start without these (SLURM_NOTES);
    # it has no Lightning.
    export E2E_TORCHRUN=/usr/bin/torchrun E2E_TORCHRUN_ARGS=${E2E_TORCHRUN_ARGS:-"--redirects 1 --tee 1"}
    METHODS=(floor a b c)
else
    METHODS=(floor a b c d)
fi

# ---- inside the allocation: R interleaved rounds at K ranks per node --------------------------
if [[ -n $INNER ]]; then
    K=$INNER
    dir=$RESULTS/2x$K
    mkdir -p "$dir"
    cd "$dir" || exit 1
    # The launchers make a log directory per run (tempfile.mkdtemp): keep them with the results.
    export TMPDIR=$dir/tmp
    mkdir -p "$TMPDIR"
    for ((rep = 1; rep <= R; rep++)); do
        # Whole rounds only, and at least one: past this size's share of the time budget, stop.
        if ((rep > 1)) && [[ ${EPOCHREALTIME%.*} -ge $E2E_STOP_AT ]]; then
            echo "  2x$K: time budget spent after $((rep - 1)) of $R rounds" | tee -a "$RESULTS/header.txt"
            break
        fi
        for m in "${METHODS[@]}"; do
            case $m in
            floor) cmd=(srun -N2 -n$((2 * K)) --ntasks-per-node="$K" "$PY" "$BENCH/e2e_rank.py" --floor) ;;
            a) cmd=(srun --ddp -N2 -n$((2 * K)) --ntasks-per-node="$K" "$PY" "$BENCH/e2e_rank.py") ;;
            b) cmd=(srun -N2 -n2 --ntasks-per-node=1 "$BENCH/e2e_seed_wrapper.sh" "$K" "$BENCH/e2e_rank.py") ;;
            c) cmd=(srun -N2 -n2 --ntasks-per-node=1 "$BENCH/e2e_torchrun.sh" "$K" "$BENCH/e2e_rank.py") ;;
            d) cmd=(srun -N2 -n$((2 * K)) --ntasks-per-node="$K" "$PY" "$BENCH/e2e_lightning_rank.py") ;;
            esac
            # -n always: inside salloc, srun takes the allocation's SLURM_NTASKS otherwise.
            out=$dir/$rep-$m.out
            t0=$EPOCHREALTIME  # no fork between this and srun's exec
            timeout "$RUN_TIMEOUT" "${cmd[@]}" >"$out.log" 2>&1
            rc=$?
            t1=$EPOCHREALTIME
            { echo "RUN method=$m size=2x$K rep=$rep rc=$rc t0=$t0 t1=$t1"; cat "$out.log"; } >"$out"
            rm -f "$out.log"
            printf '  2x%s rep %d %-5s %s s%s\n' "$K" "$rep" "$m" \
                "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')" \
                "$( ((rc)) && echo " (exit $rc)")"
        done
    done
    exit 0
fi

# ---- outside: lock, cluster, one allocation per size, report --------------------------------
export SDDP_CLUSTER_DIR=${SDDP_CLUSTER_DIR:-/tmp/sddp-e2e}
if ((!RUNNING)) && [[ -z ${SDDP_E2E_LOCKED:-} ]]; then
    # One cluster on the machine at a time: hold the shared lock from up to down (-o: the
    # daemons must not inherit it).
    # A cluster another session left up (under another SDDP_CLUSTER_DIR) is not ours to stop:
    # give the lock back and try again later (exit 75 from the locked run).
    for ((try = 1; ; try++)); do
        echo "waiting for /tmp/sddp-cluster.lock ..."
        SDDP_E2E_LOCKED=1 flock -o /tmp/sddp-cluster.lock bash "$0" "${ARGS[@]}"
        rc=$?
        ((rc == 75 && try < ${E2E_TRIES:-20})) || exit $rc
        echo "another session's cluster is up: retrying in 30 s (try $try)"
        sleep 30
    done
fi
PLUGIN=${PLUGIN:-$ROOT/build/spank_plugin/spank_ddp.so}
if [[ ! -f $PLUGIN ]]; then
    echo "building the plugin ($PLUGIN) ..."
    [[ -f $ROOT/build/CMakeCache.txt ]] || cmake -S "$ROOT" -B "$ROOT/build" >/dev/null || exit 1
    cmake --build "$ROOT/build" -j"$(nproc)" --target spank_ddp >/dev/null || exit 1
fi
"$PY" -c 'import torch.distributed' 2>/dev/null || { echo "no torch for $PY" >&2; exit 1; }
export RESULTS=${RESULTS:-$(mktemp -d /tmp/sddp-e2e-results.XXXXXX)}
mkdir -p "$RESULTS"
export R

started=$SECONDS
if ((!RUNNING)); then
    trap 'bash "$ROOT/tests/cluster/cluster.sh" down >/dev/null 2>&1 || echo "cluster down failed" >&2' EXIT
    if ! PLUGIN=$PLUGIN bash "$ROOT/tests/cluster/cluster.sh" up >"$RESULTS/cluster-up.log" 2>&1; then
        if grep -q "another cluster is up" "$RESULTS/cluster-up.log"; then
            trap - EXIT
            exit 75
        fi
        tail -n 30 "$RESULTS/cluster-up.log"; echo "cluster up failed" >&2; exit 1
    fi
else
    [[ -f $SDDP_CLUSTER_DIR/env.sh ]] || { echo "no cluster at $SDDP_CLUSTER_DIR" >&2; exit 1; }
    bash "$ROOT/tests/cluster/cluster.sh" plugin "$PLUGIN" >/dev/null || exit 1
fi
# shellcheck disable=SC1091
source "$SDDP_CLUSTER_DIR/env.sh"
echo "cluster up ($((SECONDS - started)) s); R=$R, raw output in $RESULTS"
{
    raw_header "bash bench/e2e/e2e_launch.sh ${ARGS[*]} (R=$R PER_NODE=\"$PER_NODE\" E2E_BUDGET=$BUDGET)"
    echo "# torch $("$PY" -c 'import torch; print(torch.__version__)')," \
        "lightning $("$PY" -c 'import lightning_fabric as l; print(l.__version__)' 2>/dev/null || echo none)," \
        "$(srun --version)"
} >"$RESULTS/header.txt"
budget_start=${EPOCHREALTIME%.*}
salloc_failed=0
read -ra sizes <<<"$PER_NODE"
for i in "${!sizes[@]}"; do
    K=${sizes[i]}
    # This size may run until its share of BUDGET is spent, counting what earlier sizes left
    # over; shares weighted K + 2: a round took ~25 s at 2x2 and ~60 s at 2x8 on 2 cores.
    total=0; upto=0
    for j in "${!sizes[@]}"; do
        total=$((total + sizes[j] + 2))
        ((j <= i)) && upto=$((upto + sizes[j] + 2))
    done
    export E2E_STOP_AT=$((budget_start + BUDGET * upto / total))
    # One allocation per size: what follows is step launches only, as in a batch script.
    if ! timeout $((R * 4 * RUN_TIMEOUT + 60)) salloc -N2 --ntasks-per-node="$K" --immediate=60 \
        -t 15 -J e2e-2x$K bash "$0" --inner "$K" 2> >(grep -v '^salloc: ' >&2); then
        echo "salloc for 2x$K failed" >&2
        salloc_failed=1
    fi
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg); $((SECONDS - started)) s in all" >>"$RESULTS/header.txt"
echo
python3 "$ROOT/bench/report.py" e2e "$RESULTS" && ((!salloc_failed))
