#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# After the start, in pyxis containers (pyxis listed first): fail fast (one rank exits 7, the
# others are ended within seconds, srun's stderr names the rank) and --ddp=requeue (SIGUSR1
# reaches the ranks inside the containers, they save and exit, the job requeues itself).
source "$(dirname "$0")/container_lib.sh"
PY=/usr/bin/python3
use_pyxis first extra-hooks use_squashfuse=1
jobs_to_cancel=()
lifecycle_cleanup() {
    for j in "${jobs_to_cancel[@]}"; do scancel "$j" 2>/dev/null || true; done
    container_cleanup
}
trap lifecycle_cleanup EXIT

# ---- fail fast --------------------------------------------------------------------------------
# rank 3 (alone on n2 with -N2 -n4) exits 7 after 2 s; the others would sleep 60 s.
t=$SECONDS
out=$(csrun "$IMAGE" --ddp -N2 -n4 bash -c \
    'if [ "$SLURM_PROCID" = 3 ]; then sleep 2; exit 7; fi; sleep 60' 2>&1) && rc=0 || rc=$?
took=$((SECONDS - t))
# A container start adds a few seconds to the 2 s the rank runs and the kill request's 0.5 s.
if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [ "$took" -le 25 ]; then
    pass "fail fast in a container: srun exited $rc after $took s"
else
    fail "fail fast in a container: srun exited $rc after $took s (expected non-zero within ~20 s)"; tail -20 <<<"$out"
fi
expect_contains "fail fast in a container: stderr names rank 3, n2 and the status" "$out" \
    "rank 3 on n2 ended with exit status 7"

# ---- requeue ----------------------------------------------------------------------------------
# The trainer saves a "checkpoint" (the restart count it saw) on SIGUSR1 and exits 0.
cat >"$WORK/train.py" <<'TRAINER'
import os, signal, sys, time
out, rank = sys.argv[1], os.environ.get("RANK", "?")
restarts = os.environ.get("SLURM_DDP_RESTARTS", "unset")
def save(sig, frame):
    with open(f"{out}/saved.{rank}", "w") as f:
        f.write(restarts)
    sys.exit(0)
signal.signal(signal.SIGUSR1, save)
open(f"{out}/started.{rank}.{restarts}", "w").close()
for _ in range(1200):
    time.sleep(0.1)
TRAINER
mkdir -p "$WORK/rq"
job=$(sbatch --parsable -J ctr-requeue -N2 -n2 --requeue --ddp=requeue -o "$WORK/rq.out" --wrap \
    "srun -N2 -n2 --container-image=$IMAGE --container-mounts=$CTR_MOUNTS $PY $WORK/train.py $WORK/rq")
jobs_to_cancel+=("$job")
count() { find "$WORK/rq" -maxdepth 1 -name "$1" | wc -l; }
started() { [ "$(count 'started.*.0')" = 2 ]; }
restarted() { [ "$(job_field "$job" Restarts)" = 1 ]; }
if wait_for 90 started; then
    pass "requeue in a container: both ranks started with SLURM_DDP_RESTARTS=0"
    scancel --signal=USR1 "$job"
    if wait_for 40 restarted; then
        pass "requeue in a container: job $job requeued itself (Restarts=1, $(job_field "$job" JobState))"
    else
        fail "requeue in a container: job $job not requeued: $(scontrol show job "$job" | head -5)"
        cat "$WORK/rq.out"
    fi
    expect_eq "requeue in a container: both ranks saved their checkpoint on SIGUSR1" \
        "$(cat "$WORK"/rq/saved.* 2>/dev/null | tr -d '\n')" "00"
else
    fail "requeue in a container: the ranks did not start: $(ls "$WORK/rq"); $(tail -5 "$WORK/rq.out" 2>/dev/null)"
fi
finish
