#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# --ddp=requeue with real trainers: a job signalled early (what `#SBATCH --signal=USR1@T` does
# before the time limit; here `scancel --signal=USR1`, the same delivery, at a known moment) has
# its trainer save a checkpoint, is requeued with no scontrol in its script, and its next run
# resumes from the checkpoint with SLURM_DDP_RESTARTS=1.
#  - Lightning in its Slurm mode (plain `--ddp`, SLURMEnvironment with auto_requeue): Lightning's
#    own SIGUSR1 handler saves hpc_ckpt_1.ckpt and runs `scontrol requeue` itself; the plugin's
#    requeue must not requeue the job a second time (Restarts stays 1).
#  - torchrun under `--ddp=launcher,requeue`: torchrun outlives SIGUSR1, its workers save
#    (requeue_torch.py: the few-line handler of docs/lifecycle.md) and exit 0.
# Slurm holds a requeued job back for about 2 minutes (docs/lifecycle.md), so the test takes ~4.
source "$(dirname "$0")/stack_lib.sh"
VENV=$(stack_env torch)
W=$(stack_tmp)
mkdir -p "$W/l" "$W/t"
chmod 755 "$W/l" "$W/t"
jobs_to_cancel=()
cleanup() {
    for j in "${jobs_to_cancel[@]}"; do scancel "$j" 2>/dev/null || true; done
    rm -rf "$W"
    use_plugin
}
trap cleanup EXIT

cat >"$W/lightning_job.sh" <<JOB
#!/bin/bash
#SBATCH -J rq-lightning -N2 --ntasks-per-node=1 --requeue
#SBATCH --ddp=requeue
srun "$VENV/bin/python" "$FW_DIR/requeue_lightning.py" "$W/l"
JOB
cat >"$W/torchrun_job.sh" <<JOB
#!/bin/bash
#SBATCH -J rq-torchrun -N2 --ntasks-per-node=1 --requeue
#SBATCH --ddp=launcher,nproc=2,requeue
srun "$VENV/bin/torchrun" "$FW_DIR/requeue_torch.py" "$W/t"
JOB

count() { find "$1" -maxdepth 1 -name "$2" | wc -l; }
has() { [ "$(count "$1" "$2")" -ge "$3" ]; }  # has DIR PATTERN N: at least N such files
# Every poll of a job records the Restarts it saw, for most_restarts: slurmctld forgets an ended
# job within seconds (MinJobAge), so the last look may find nothing.
seen_restarts() { job_field "$1" Restarts | tee -a "$W/restarts.$1"; }
restarted() { [ "$(seen_restarts "$1")" = 1 ]; }
# finished JOB: the job ended (or slurmctld forgot it).
finished() {
    seen_restarts "$1" >/dev/null
    state=$(job_field "$1" JobState)
    [ -z "$state" ] || [[ $state =~ ^(COMPLETED|FAILED|CANCELLED|TIMEOUT)$ ]]
}
# Both jobs polled on every round: one may end, and be forgotten, while the other still runs.
all_finished() {
    local j rc=0
    for j in "$@"; do finished "$j" || rc=1; done
    return $rc
}
most_restarts() { sort -n "$W/restarts.$1" 2>/dev/null | tail -1; }
steps_of() { find "$1" -maxdepth 1 -name "$2" -printf '%f\n' | awk -F. '{ print $4 }' | sort -n | uniq | tr '\n' ' '; }

t0=$SECONDS
light=$(sbatch --parsable -o "$W/lightning.out" "$W/lightning_job.sh")
jobs_to_cancel+=("$light")
torch=$(sbatch --parsable -o "$W/torchrun.out" "$W/torchrun_job.sh")
jobs_to_cancel+=("$torch")

# Importing torch on a loaded machine takes a while; then let them train a few steps.
wait_for 240 has "$W/l" 'started.*.0.0' 2 || fail "lightning: 2 ranks did not start with SLURM_DDP_RESTARTS=0: $(ls "$W/l"; tail -20 "$W/lightning.out")"
wait_for 240 has "$W/t" 'started.*.0.0' 4 || fail "torchrun: 4 workers did not start with SLURM_DDP_RESTARTS=0: $(ls "$W/t"; tail -20 "$W/torchrun.out")"
sleep 5
scancel --signal=USR1 "$light"
scancel --signal=USR1 "$torch"
t_signal=$SECONDS

for j in "$light" "$torch"; do
    if wait_for 90 restarted "$j"; then
        pass "job $j ($(job_field "$j" JobName)) requeued $((SECONDS - t_signal)) s after SIGUSR1 (Restarts=1, $(job_field "$j" JobState))"
    else
        fail "job $j not requeued: $(scontrol show job "$j" | head -4)"
    fi
done
grep -q 'sigusr1=lightning env=SLURMEnvironment' "$W/lightning.out" &&
    pass "lightning: SLURMEnvironment, Lightning's own handler owns SIGUSR1 under --ddp=requeue" ||
    fail "lightning: Lightning's requeue handler not installed: $(grep REQUEUE "$W/lightning.out")"
[ -s "$W/l/hpc_ckpt_1.ckpt" ] && pass "lightning: its SIGUSR1 handler saved hpc_ckpt_1.ckpt" ||
    fail "lightning: no hpc_ckpt_1.ckpt: $(ls "$W/l"; tail -30 "$W/lightning.out")"
expect_eq "torchrun: the 4 workers agreed on one step and saved there (torchrun outlived SIGUSR1)" \
    "$(count "$W/t" 'saved.*.0.*')/$(steps_of "$W/t" 'saved.*.0.*' | wc -w)" "4/1"
[ -s "$W/t/torch.ckpt" ] && pass "torchrun: rank 0 wrote torch.ckpt" || fail "torchrun: no torch.ckpt: $(tail -30 "$W/torchrun.out")"

# The second run: Slurm starts a requeued job only after its requeue delay.
wait_for 300 all_finished "$light" "$torch" || true  # each job's verdict follows
for j in "$light" "$torch"; do
    if finished "$j"; then
        pass "job $j: second run ended ${state:-and was purged} by $((SECONDS - t_signal)) s after the signal"
    else
        fail "job $j: no second run within 300 s: $(job_field "$j" JobState) $(job_field "$j" Reason)"
    fi
    expect_eq "job $j requeued once (most Restarts seen)" "$(most_restarts "$j")" 1
done
saved_step=$(steps_of "$W/t" 'saved.*.0.*' | tr -d ' ')
expect_eq "torchrun: the second run's 4 workers see SLURM_DDP_RESTARTS=1 and resume at the saved step ${saved_step:-?}" \
    "$(count "$W/t" "started.*.1.${saved_step:-x}")" 4
expect_eq "torchrun: the second run finished" "$(count "$W/t" 'done.*.1.*')" 4
resumed=$(steps_of "$W/l" 'started.*.1.*' | tr -d ' ')
if [ "$(count "$W/l" 'started.*.1.*')" = 2 ] && [ "${resumed:-0}" -gt 0 ]; then
    pass "lightning: the second run's ranks see SLURM_DDP_RESTARTS=1 and fit() resumed at step $resumed from hpc_ckpt_1.ckpt"
else
    fail "lightning: second run did not resume: $(ls "$W/l")"
fi
expect_eq "lightning: the second run finished" "$(count "$W/l" 'done.*.1.*')" 2
echo "wall time: $((SECONDS - t0)) s"
finish
