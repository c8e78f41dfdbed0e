#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Fail fast: one failed rank of a --ddp step ends the others within seconds, and srun's stderr
# names the rank, its node and how it ended; one kill request per failure, not one per node;
# --ddp=keep-going, steps without --ddp and steps only a site default gave --ddp keep Slurm's
# behaviour (the others run on); a step that was signalled (scancel --signal=TERM, as the time
# limit and preemption do) is shutting down: ranks that save and exit 1 end nothing.
source "$(dirname "$0")/lib.sh"
C="$SDDP_BUILD_DIR/examples/c_minimal/c_minimal"
WORK=$(mktemp -d "$SDDP_WORK_ROOT/sddp-ff.XXXXXX")
chmod 755 "$WORK"
trap 'rm -rf "$WORK"; use_plugin' EXIT

# rank 3 (alone on n2 with -N2 -n4) ends after 2 s as $1 says; the others sleep $2 seconds.
rank3_ends() {
    printf 'if [ "$SLURM_PROCID" = 3 ]; then sleep 2; %s; fi; sleep %s' "$1" "$2"
}
# run WHAT SRUN_ARGS... : sets $out, $rc, $took
run() {
    local t=$SECONDS
    rc=0
    out=$(srun_t "$@" 2>&1) || rc=$?
    took=$((SECONDS - t))
}
expect_fast() {  # expect_fast WHAT
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [ "$took" -le 14 ]; then
        pass "$1: srun exited $rc after $took s"
    else
        fail "$1: srun exited $rc after $took s (expected non-zero within ~12 s)"; echo "$out"
    fi
}
expect_slow() {  # expect_slow WHAT MIN_SECONDS
    if [ "$rc" -ne 0 ] && [ "$took" -ge "$2" ]; then
        pass "$1: the other ranks ran on ($took s, srun exited $rc)"
    else
        fail "$1: srun exited $rc after $took s (expected non-zero after >= $2 s)"; echo "$out"
    fi
}

run --ddp -N2 -n4 bash -c "$(rank3_ends 'exit 7' 60)"
expect_fast "rank 3 exits 7"
expect_contains "exit 7: stderr names rank 3, n2 and the status" "$out" \
    "rank 3 on n2 ended with exit status 7"
if grep -m1 'error:' <<<"$out" | grep -qE 'rank 3 on n2|n2: task 3:'; then
    pass "exit 7: the first error line names rank 3"
else
    fail "exit 7: the first error line does not name rank 3:"; echo "$out"
fi
expect_contains "exit 7: srun's own line" "$out" "n2: task 3: Exited with exit code 7"
expect_not_contains "exit 7: the killed ranks are not reported as failures" "$out" "rank 0 on"
# One failure costs one kill request: n2 sends it; n1, whose ranks (and watcher) die with the
# step, sends none. Both say so in their slurmd log at info level.
step=$(sed -n 's/.*ending the other ranks of step \([0-9]*\.[0-9]*\).*/\1/p' <<<"$out" | head -1)
requests() { cat "$SDDP_CLUSTER_DIR"/log/slurmd-n*.log | grep -c "fail-fast: asked slurmctld to end step $step\$" || true; }
declined() { cat "$SDDP_CLUSTER_DIR"/log/slurmd-n*.log | grep -c "fail-fast: step $step is being killed already" || true; }
wait_for 5 test "$(declined)" -ge 1 || true
expect_eq "exit 7: one kill request for step $step (logs of both nodes)" "$(requests)" 1
expect_eq "exit 7: the node whose ranks were killed with the step sent none" "$(declined)" 1

run --ddp -N2 -n4 bash -c "$(rank3_ends 'kill -KILL $$' 60)"
expect_fast "rank 3 killed by SIGKILL"
# The plugin cannot tell a rank killed first from one killed with the step (both die of SIGKILL),
# so srun's own line names it. Not always first: under contain_spank (26.05) the node that ran the
# rank reports its end after the task_exit hook's clone, and the step's cancellation can get there
# before it.
expect_contains "SIGKILL: srun's errors name task 3 on n2 and the signal" \
    "$(grep 'error:' <<<"$out")" "n2: task 3: Killed"
expect_not_contains "SIGKILL: no fail-fast report for the ranks killed with the step" "$out" \
    "was killed by signal 9"

run --ddp -N2 -n4 bash -c "ulimit -c 0; $(rank3_ends 'kill -SEGV $$' 60)"
expect_fast "rank 3 killed by SIGSEGV"
expect_contains "SIGSEGV: stderr names rank 3, n2 and the signal" "$out" \
    "rank 3 on n2 was killed by signal 11 (SIGSEGV)"

run --ddp=keep-going -N2 -n4 bash -c "$(rank3_ends 'exit 7' 8)"
expect_slow "--ddp=keep-going" 8
expect_not_contains "--ddp=keep-going: no fail-fast message" "$out" "ending the other ranks"

run -N2 -n4 bash -c "$(rank3_ends 'exit 7' 8)"
expect_slow "without --ddp: Slurm's default" 8
expect_not_contains "without --ddp: no fail-fast message" "$out" "ending the other ranks"

# A site default (default=on) gives every step the variables, but an ordinary step that did
# not ask for --ddp (`srun -n64 ./sweep`) keeps Slurm's behaviour; fail-fast=all widens it.
use_plugin default=on
run -N2 -n4 bash -c "$(rank3_ends 'exit 7' 8)"
expect_slow "default=on, no --ddp: Slurm's default" 8
expect_not_contains "default=on, no --ddp: no fail-fast message" "$out" "ending the other ranks"
use_plugin default=on fail-fast=all
run -N2 -n4 bash -c "$(rank3_ends 'exit 7' 60)"
expect_fast "default=on fail-fast=all, no --ddp"
expect_contains "default=on fail-fast=all: names rank 3" "$out" "rank 3 on n2 ended with exit status 7"
use_plugin

# Shutting down: every rank traps TERM and saves; rank 0 exits 1 at once, the others after 4 s
# of saving. Fail fast must not kill them mid-save.
cat >"$WORK/save_on_term.py" <<'PY'
import os, signal, sys, time
out, rank = sys.argv[1], os.environ["SLURM_PROCID"]
def save(*_):
    if rank != "0":
        time.sleep(4)
    open(f"{out}/saved.{rank}", "w").close()
    sys.exit(1)
signal.signal(signal.SIGTERM, save)
open(f"{out}/up.{rank}", "w").close()
time.sleep(120)
PY
ranks_up() { [ "$(find "$WORK" -maxdepth 1 -name 'up.*' | wc -l)" -ge 4 ]; }
name="sddp-ff-term-$$"
timeout 90 srun --ddp -J "$name" -N2 -n4 /usr/bin/python3 "$WORK/save_on_term.py" "$WORK" \
    >"$WORK/term.out" 2>&1 &
srun_pid=$!
if wait_for 60 ranks_up; then
    scancel --signal=TERM "$(squeue -h -n "$name" -o %i | head -1).0"
    rc=0
    wait "$srun_pid" || rc=$?
    expect_eq "TERM: every rank saved its checkpoint (srun exited $rc)" \
        "$(cd "$WORK" && ls saved.* 2>/dev/null | sort | tr '\n' ' ')" "saved.0 saved.1 saved.2 saved.3 "
    expect_not_contains "TERM: no fail-fast report while shutting down" "$(cat "$WORK/term.out")" \
        "ending the other ranks"
else
    fail "TERM: the 4 ranks did not start within 60 s:"
    cat "$WORK/term.out"
    kill "$srun_pid" 2>/dev/null || true
fi

# A rank that fails before the rendezvous no longer leaves the others waiting for the timeout.
if [ -x "$C" ]; then
    run --ddp=timeout=60 -N2 -n4 bash -c 'if [ "$SLURM_PROCID" = 3 ]; then exit 1; fi; exec '"$C"
    expect_fast "rank 3 exits 1 before the rendezvous"
    expect_contains "before the rendezvous: names rank 3" "$out" "rank 3 on n2 ended with exit status 1"
fi
finish
