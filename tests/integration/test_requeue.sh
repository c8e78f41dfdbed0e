#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# --ddp=requeue: `scancel --signal=USR1` (what sbatch --signal=USR1@T does before the time limit)
# reaches every rank, also the workers of a per-node launcher, which must outlive it; the ranks
# save and exit; the job requeues itself when its script ends (Restarts=1, pending again) with
# no scontrol in the script; every rank of every run sees SLURM_DDP_RESTARTS; a job cancelled
# after the signal stays cancelled, also when its script traps TERM and ends by itself. The
# record of the signal belongs to one run and to root: no marker is left behind, one of another
# run or node (or the old /dev/shm place) requeues nothing, and no other user can plant or block
# one.
source "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
MARKERS=/run/slurm-ddp
WORK=$(mktemp -d "$SDDP_WORK_ROOT/sddp-requeue.XXXXXX")
chmod 755 "$WORK"
jobs_to_cancel=()
planted=()
cleanup() {
    for j in "${jobs_to_cancel[@]}"; do scancel "$j" 2>/dev/null || true; done
    rm -rf "$WORK" "${planted[@]}"
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
mkdir -p "$WORK/p" "$WORK/l" "$WORK/c" "$WORK/t" "$WORK/b" "$WORK/f" "$WORK/i"

submit() {  # submit NAME SRUN_ARGS... : a 2-node requeue job running one srun step
    local name=$1
    shift
    sbatch --parsable -J "rq-$name" -N2 -n2 --requeue --ddp=requeue -o "$WORK/$name.out" \
        --wrap "srun $*"
}
# The same, held: the test plants files for the job id before it runs.
submit_held() {
    local name=$1
    shift
    sbatch --parsable --hold -J "rq-$name" -N2 -n2 --requeue --ddp=requeue -o "$WORK/$name.out" \
        --wrap "$*"
}
count() { find "$1" -maxdepth 1 -name "$2" | wc -l; }
has() { [ "$(count "$1" "$2")" = "$3" ]; }  # has DIR PATTERN N
restarted() { [ "$(job_field "$1" Restarts)" = 1 ]; }

plain=$(submit plain -N2 -n2 $PY "$WORK/train.py" "$WORK/p")
jobs_to_cancel+=("$plain")
# Under proctrack/cgroup Slurm signals only slurmstepd's own children, unless cgroup.conf says
# SignalChildrenProcesses=yes (25.11+): a launcher's workers never get the signal there.
launched=
if [ "${SDDP_CLUSTER_PROFILE:-basic}" = production ] &&
    ! grep -qix 'SignalChildrenProcesses=yes' "$SDDP_CLUSTER_DIR/cgroup.conf"; then
    echo "note: launcher case not run: proctrack/cgroup without SignalChildrenProcesses=yes does not signal a launcher's workers"
else
    launched=$(submit launcher --ddp=launcher,requeue -N2 --ntasks-per-node=1 -n2 bash "$WORK/launch.sh")
    jobs_to_cancel+=("$launched")
fi
# Signalled early, then cancelled by its user while the ranks save: it must stay cancelled.
cancelled=$(submit cancelled -N2 -n2 $PY "$WORK/train.py" "$WORK/c")
jobs_to_cancel+=("$cancelled")
# The same with a script that traps TERM and so ends by itself once its step is gone.
trapped=$(sbatch --parsable -J rq-trapped -N2 -n2 --requeue --ddp=requeue -o "$WORK/trapped.out" \
    --wrap "trap 'echo script got TERM' TERM; srun -N2 -n2 $PY $WORK/train.py $WORK/t & wait; wait")
jobs_to_cancel+=("$trapped")
# Another user squats the place the marker of the next job used to go (/dev/shm): requeue must
# still work. Another job's leftovers (the old /dev/shm marker, markers of another run and
# another node) must not requeue a job that ends cleanly without a signal.
blocked=$(submit_held blocked srun -N2 -n2 $PY "$WORK/train.py" "$WORK/b")
jobs_to_cancel+=("$blocked")
runuser -u nobody -- mkdir -p "/dev/shm/slurm-ddp-requeue.$blocked"
planted+=("/dev/shm/slurm-ddp-requeue.$blocked")
forced=$(submit_held forced "srun -N2 -n2 $PY -c 'import time; time.sleep(3)'")
jobs_to_cancel+=("$forced")
install -d -m 0700 "$MARKERS"
for f in "/dev/shm/slurm-ddp-requeue.$forced" "$MARKERS/requeue.$forced.1.n1" \
    "$MARKERS/requeue.$forced.0.n2"; do
    : >"$f"
    planted+=("$f")
done
if runuser -u nobody -- sh -c ": > $MARKERS/requeue.$blocked.0.n1" 2>/dev/null; then
    fail "another user could write a marker in $MARKERS ($(stat -c '%U %a' "$MARKERS"))"
else
    pass "no other user can write a marker in $MARKERS ($(stat -c '%U %a' "$MARKERS"))"
fi
scontrol release "$blocked" "$forced"
# srun's own allocation, no batch script: nothing requeues it, and no marker may outlive it.
srun -J rq-interactive -N2 -n2 --ddp=requeue $PY "$WORK/train.py" "$WORK/i" >"$WORK/interactive.out" 2>&1 &
srun_pid=$!
wait_for 30 eval '[ -n "$(squeue -h -n rq-interactive -o %i)" ]' ||
    fail "interactive: srun's job did not start: $(cat "$WORK/interactive.out")"
interactive=$(squeue -h -n rq-interactive -o %i)
jobs_to_cancel+=($interactive)

wait_for 60 has "$WORK/p" 'started.*.0' 2 ||
    fail "plain: ranks did not start with SLURM_DDP_RESTARTS=0: $(ls "$WORK/p")"
[ -z "$launched" ] || wait_for 60 has "$WORK/l" 'started.*.0' 4 ||
    fail "launcher: workers did not start with SLURM_DDP_RESTARTS=0: $(ls "$WORK/l")"
wait_for 60 has "$WORK/c" 'started.*.0' 2 ||
    fail "cancelled: ranks did not start: $(ls "$WORK/c")"
wait_for 60 has "$WORK/t" 'started.*.0' 2 ||
    fail "trapped: ranks did not start: $(ls "$WORK/t")"
wait_for 60 has "$WORK/b" 'started.*.0' 2 ||
    fail "blocked: ranks did not start: $(ls "$WORK/b")"
wait_for 60 has "$WORK/i" 'started.*.0' 2 ||
    fail "interactive: ranks did not start: $(ls "$WORK/i")"
sleep 1
for j in "$plain" $launched "$cancelled" "$trapped" "$blocked" $interactive; do
    scancel --signal=USR1 "$j"
done
sleep 0.5
scancel "$cancelled" "$trapped"

for name in plain ${launched:+launcher} blocked; do
    case $name in plain) j=$plain ;; launcher) j=$launched ;; blocked) j=$blocked ;; esac
    if wait_for 40 restarted "$j"; then
        pass "$name: job $j requeued itself (Restarts=1, $(job_field "$j" JobState))"
    else
        fail "$name: job $j not requeued: $(scontrol show job "$j" | head -5)"
        cat "$WORK/$name.out"
    fi
done
# The plugin's requeue acts when the batch script ends: a cancelled job's script is killed, or,
# trapping TERM, ends by itself while the job is no longer running.
for name in cancelled trapped; do
    j=$([ $name = cancelled ] && echo "$cancelled" || echo "$trapped")
    if wait_for 15 restarted "$j"; then
        fail "$name: job $j came back after scancel (Restarts=1)"
        cat "$WORK/$name.out"
    else
        pass "$name: job $j signalled early, then cancelled, stays cancelled ($(job_field "$j" JobState || true))"
    fi
done
ended() { [ -z "$(job_field "$1" JobState)" ] || [ "$(job_field "$1" JobState)" = COMPLETED ]; }
if timeout 30 tail --pid="$srun_pid" -f /dev/null && wait "$srun_pid"; then
    pass "interactive: srun's ranks saved and the step ended cleanly"
else
    fail "interactive: srun did not end cleanly within 30 s of SIGUSR1: $(tail -3 "$WORK/interactive.out")"
fi
if wait_for 30 ended "$forced" && ! restarted "$forced"; then
    pass "forced: a clean run with markers of other runs and nodes planted was not requeued"
else
    fail "forced: job $forced: $(job_field "$forced" JobState) Restarts=$(job_field "$forced" Restarts)"
fi
# Every run removes its markers, on every node (a job writes one only on its first node, whose
# batch step removes every marker of the job there when the script ends).
left=$(cd "$MARKERS" 2>/dev/null && ls | grep -E "^requeue\.($plain|${launched:-x}|$blocked|$cancelled|$trapped|${interactive:-x})\." || true)
expect_eq "no marker left by the requeued, cancelled, blocked and srun-allocated jobs" "$left" ""
expect_eq "plain: both ranks saved their checkpoint" "$(cat "$WORK"/p/saved.* 2>/dev/null | tr -d '\n')" "00"
[ -z "$launched" ] || expect_eq "launcher: the 4 workers saved (the launcher outlived SIGUSR1)" \
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
