#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# --ddp=requeue: `scancel --signal=USR1` (what sbatch --signal=USR1@T does before the time limit)
# reaches every rank, also the workers of a per-node launcher, which must outlive it; the ranks
# save and exit; the job requeues itself when its script ends (Restarts=1, pending again) with
# no scontrol in the script; every rank of every run sees SLURM_DDP_RESTARTS; a job cancelled
# after the signal stays cancelled.
source "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
WORK=$(mktemp -d /tmp/sddp-requeue.XXXXXX)
chmod 755 "$WORK"
jobs_to_cancel=()
cleanup() {
    for j in "${jobs_to_cancel[@]}"; do scancel "$j" 2>/dev/null || true; done
    rm -rf "$WORK"
    use_plugin
}
trap cleanup EXIT

# A trainer: saves a "checkpoint" (the restart count it saw) on SIGUSR1 and exits 0.
cat >"$WORK/train.py" <<'TRAINER'
import os, signal, sys, time
out, tag = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else os.environ.get("RANK", "?")
restarts = os.environ.get("SLURM_DDP_RESTARTS", "unset")
def save(sig, frame):
    time.sleep(1)  # a checkpoint takes a while: nobody may kill the rank meanwhile
    with open(f"{out}/saved.{tag}", "w") as f:
        f.write(restarts)
    sys.exit(0)
signal.signal(signal.SIGUSR1, save)
open(f"{out}/started.{tag}.{restarts}", "w").close()
for _ in range(1200):
    time.sleep(0.1)
TRAINER
# A per-node launcher without a SIGUSR1 handler, like torchrun: two workers per node.
cat >"$WORK/launch.sh" <<LAUNCHER
#!/bin/bash
for i in 0 1; do $PY "$WORK/train.py" "$WORK/l" "\$SLURM_NODEID-\$i" & done
wait
LAUNCHER
mkdir -p "$WORK/p" "$WORK/l" "$WORK/c"

submit() {  # submit NAME SRUN_ARGS... : a 2-node requeue job running one srun step
    local name=$1
    shift
    sbatch --parsable -J "rq-$name" -N2 -n2 --requeue --ddp=requeue -o "$WORK/$name.out" \
        --wrap "srun $*"
}
count() { find "$1" -maxdepth 1 -name "$2" | wc -l; }
has() { [ "$(count "$1" "$2")" = "$3" ]; }  # has DIR PATTERN N
restarted() { [ "$(job_field "$1" Restarts)" = 1 ]; }

plain=$(submit plain -N2 -n2 $PY "$WORK/train.py" "$WORK/p")
jobs_to_cancel+=("$plain")
launched=$(submit launcher --ddp=launcher,requeue -N2 --ntasks-per-node=1 -n2 bash "$WORK/launch.sh")
jobs_to_cancel+=("$launched")
# Signalled early, then cancelled by its user while the ranks save: it must stay cancelled.
cancelled=$(submit cancelled -N2 -n2 $PY "$WORK/train.py" "$WORK/c")
jobs_to_cancel+=("$cancelled")

wait_for 60 has "$WORK/p" 'started.*.0' 2 ||
    fail "plain: ranks did not start with SLURM_DDP_RESTARTS=0: $(ls "$WORK/p")"
wait_for 60 has "$WORK/l" 'started.*.0' 4 ||
    fail "launcher: workers did not start with SLURM_DDP_RESTARTS=0: $(ls "$WORK/l")"
wait_for 60 has "$WORK/c" 'started.*.0' 2 ||
    fail "cancelled: ranks did not start: $(ls "$WORK/c")"
sleep 1
scancel --signal=USR1 "$plain"
scancel --signal=USR1 "$launched"
scancel --signal=USR1 "$cancelled"
sleep 0.5
scancel "$cancelled"

for name in plain launcher; do
    j=$([ $name = plain ] && echo "$plain" || echo "$launched")
    if wait_for 40 restarted "$j"; then
        pass "$name: job $j requeued itself (Restarts=1, $(job_field "$j" JobState))"
    else
        fail "$name: job $j not requeued: $(scontrol show job "$j" | head -5)"
        cat "$WORK/$name.out"
    fi
done
# The plugin's requeue acts when the batch script ends; a cancelled one ends killed.
if wait_for 15 restarted "$cancelled"; then
    fail "cancelled: job $cancelled came back after scancel (Restarts=1)"
else
    pass "cancelled: job $cancelled signalled early, then cancelled, stays cancelled ($(job_field "$cancelled" JobState || true))"
fi
expect_eq "plain: both ranks saved their checkpoint" "$(cat "$WORK"/p/saved.* 2>/dev/null | tr -d '\n')" "00"
expect_eq "launcher: the 4 workers saved (the launcher outlived SIGUSR1)" \
    "$(cat "$WORK"/l/saved.* 2>/dev/null | tr -d '\n')" "0000"

# Slurm holds a requeued job back for CredExpire + 1 s (121 s by default); starting it earlier
# (scontrol update StartTime=now) gets it killed at launch ("Job credential revoked"). So the
# second run is checked only when asked: SDDP_REQUEUE_WAIT=1 waits up to 200 s for it.
if [ "${SDDP_REQUEUE_WAIT:-0}" = 1 ]; then
    if wait_for 200 has "$WORK/p" 'started.*.1' 2; then
        pass "plain: the second run's ranks see SLURM_DDP_RESTARTS=1"
    else
        fail "plain: no second run with SLURM_DDP_RESTARTS=1 within 200 s: $(ls "$WORK/p"); $(job_field "$plain" JobState) $(job_field "$plain" Reason)"
    fi
else
    echo "note: second run not awaited (Slurm's requeue delay); SDDP_REQUEUE_WAIT=1 checks it"
fi
finish
