#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Fail fast: one failed rank of a --ddp step ends the others within seconds, and srun's stderr
# names the rank, its node and how it ended; --ddp=keep-going and steps without --ddp keep
# Slurm's behaviour (the others run on).
source "$(dirname "$0")/lib.sh"
C="$SDDP_BUILD_DIR/examples/c_minimal/c_minimal"

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

run --ddp -N2 -n4 bash -c "$(rank3_ends 'kill -KILL $$' 60)"
expect_fast "rank 3 killed by SIGKILL"
# The plugin cannot tell a rank killed first from one killed with the step (both die of SIGKILL),
# so srun's own line names it: the first error line, before the step's cancellation.
expect_contains "SIGKILL: srun's first error names task 3 on n2 and the signal" \
    "$(grep -m1 'error:' <<<"$out")" "n2: task 3: Killed"
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

# A rank that fails before the rendezvous no longer leaves the others waiting for the timeout.
if [ -x "$C" ]; then
    run --ddp=timeout=60 -N2 -n4 bash -c 'if [ "$SLURM_PROCID" = 3 ]; then exit 1; fi; exec '"$C"
    expect_fast "rank 3 exits 1 before the rendezvous"
    expect_contains "before the rendezvous: names rank 3" "$out" "rank 3 on n2 ended with exit status 1"
fi
finish
