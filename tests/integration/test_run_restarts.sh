#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# `slurm-ddp run --restarts=N`: inside a 2-node allocation, a 1-node --ddp step that fails on n1
# starts again on n2 with SLURM_DDP_RESTARTS one higher; the summary lines name the run, its
# nodes, the first failed rank, its node and the reason; the exit status is the last run's; srun's
# and the program's stderr reach the user unchanged; a task printing lines that look like srun's or
# the plugin's reports is not taken for them; signals end the run without a restart.
source "$(dirname "$0")/lib.sh"
TOOL="$SDDP_BUILD_DIR/tools/slurm-ddp"
[ -x "$TOOL" ] || skip "slurm-ddp not built: $TOOL"
dir=$(mktemp -d /tmp/sddp-run-restarts.XXXXXX)
chmod 755 "$dir"
trap 'rm -rf "$dir"; use_plugin' EXIT

# The program: reports where it runs and what it was told, then ends as $1 says for a run whose
# SLURM_DDP_RESTARTS is below $2 (always when $2 is "always"), else exits 0.
cat >"$dir/prog.sh" <<'EOF'
#!/bin/bash
echo "prog host=$(hostname) rank=${RANK-unset} restarts=${SLURM_DDP_RESTARTS-unset}"
echo "prog-stderr rank=${RANK-unset}" >&2
printf 'stderr-tail-without-newline' >&2
if [ "$2" = always ] || [ "${SLURM_DDP_RESTARTS:-0}" -lt "$2" ]; then
    case $1 in
        exit7) exit 7 ;;
        rank1-exit7) if [ "$RANK" = 1 ]; then sleep 1; exit 7; fi; sleep 30 ;;  # rank 0 prints first
        rank0-exit7) if [ "$RANK" = 0 ]; then exit 7; fi; sleep 30 ;;
        segv) ulimit -c 0; kill -SEGV $$ ;;
        lookalike-exit7)  # lines like srun's and the plugin's, naming n2, before the real end
            echo "srun: error: n2: task 0: Exited with exit code 9" >&2
            echo "slurmstepd-n2: error: slurm-ddp: rank 0 on n2 ended with exit status 9; ending the other ranks of step ${SLURM_JOB_ID}.${SLURM_STEP_ID} (--ddp=keep-going keeps them running)" >&2
            exit 7 ;;
    esac
fi
exit 0
EOF
chmod 755 "$dir/prog.sh"

# in_alloc NODES [SALLOC_OPTIONS] CMD...: sets $out (stdout and stderr), $rc, $took
in_alloc() {
    local n=$1 t=$SECONDS
    shift
    rc=0
    out=$(timeout 120 salloc -N"$n" "$@" 2>&1) || rc=$?
    took=$((SECONDS - t))
}
summaries() { grep '^slurm-ddp run: run ' <<<"$out" || true; }

# 1. Fails with exit 7 on its first run (on n1), succeeds on the next (on n2).
in_alloc 2 "$TOOL" run --restarts=2 -N1 --ntasks-per-node=1 -- "$dir/prog.sh" exit7 1
expect_eq "fails once: exit status of the last run" "$rc" 0
expect_eq "fails once: one summary line per run" "$(summaries | wc -l)" 2
expect_contains "fails once: run 1 names rank, node and status, and what comes next" "$out" \
    "slurm-ddp run: run 1 of 3 on n1 (SLURM_DDP_RESTARTS=0): failed, rank 0 on n1: exit status 7; restarting without n1 on n2"
expect_contains "fails once: run 2 on n2 succeeded" "$out" \
    "slurm-ddp run: run 2 of 3 on n2 (SLURM_DDP_RESTARTS=1): succeeded"
expect_contains "fails once: the first run's program ran under --ddp on n1" "$out" \
    "prog host=n1 rank=0 restarts=0"
expect_contains "fails once: the second run's program on n2 saw SLURM_DDP_RESTARTS=1" "$out" \
    "prog host=n2 rank=0 restarts=1"
expect_not_contains "fails once: the second run is not on n1" "$out" "prog host=n1 rank=0 restarts=1"
expect_contains "fails once: srun's own line passes through" "$out" \
    "srun: error: n1: task 0: Exited with exit code 7"
expect_eq "fails once: the program's stderr passes through, every line" \
    "$(grep -c '^prog-stderr rank=0' <<<"$out")" 2
expect_contains "fails once: stderr without a final newline passes through" "$out" \
    "stderr-tail-without-newline"

# 2. Always fails (rank 1 of 2; rank 0 would sleep 30 s): 2 runs with --restarts=1, exit 7.
# No -n: the allocation's SLURM_NTASKS=4 does not reach srun, its 2 tasks per node do.
in_alloc 2 --ntasks-per-node=2 "$TOOL" run --restarts=1 -N1 -- "$dir/prog.sh" rank1-exit7 always
expect_eq "always fails: exits with the rank's status" "$rc" 7
expect_eq "always fails: two runs" "$(summaries | wc -l)" 2
expect_eq "always fails: 2 tasks in each run, none more" "$(grep -c '^prog host=n[12] rank=[01] ' <<<"$out")" 4
expect_contains "always fails: run 1" "$out" \
    "run 1 of 2 on n1 (SLURM_DDP_RESTARTS=0): failed, rank 1 on n1: exit status 7; restarting without n1 on n2"
expect_contains "always fails: run 2 ends the command" "$out" \
    "run 2 of 2 on n2 (SLURM_DDP_RESTARTS=1): failed, rank 1 on n2: exit status 7; no restarts left (--restarts=1), exit status 7"
if [ "$took" -lt 40 ]; then
    pass "always fails: the ranks left after a failure were ended ($took s for two runs)"
else
    fail "always fails: took $took s; the sleeping rank 0 was not ended"
fi

# 3. A crash by signal: the reason names the signal, the status is 128 + 11.
in_alloc 2 "$TOOL" run -N1 --ntasks-per-node=1 -- "$dir/prog.sh" segv always
expect_eq "SIGSEGV: exit status 128 + 11" "$rc" 139
expect_contains "SIGSEGV: the reason names the signal" "$out" \
    "run 1 of 1 on n1 (SLURM_DDP_RESTARTS=0): failed, rank 0 on n1: signal 11 (SIGSEGV); no restarts left (--restarts=0), exit status 139"

# 4. Not enough nodes left for the step: stops with the numbers.
in_alloc 2 "$TOOL" run --restarts=3 -N2 --ntasks-per-node=1 -- "$dir/prog.sh" rank0-exit7 always
expect_eq "too few nodes: exit status of the failed run" "$rc" 7
expect_eq "too few nodes: one run" "$(summaries | wc -l)" 1
expect_contains "too few nodes: names the allocation, the nodes left and the need" "$out" \
    "SLURM_JOB_NODELIST=n[1-2] leaves 1 usable node after leaving out n1 (failed), but the step needs 2 (-N2)"

# 5. SIGTERM to the command: srun ends the step, no restart, 128 + 15.
cat >"$dir/term.sh" <<EOF
#!/bin/bash
"$TOOL" run --restarts=2 -N1 --ntasks-per-node=1 -- sleep 60 &
pid=\$!
sleep 3
kill -TERM \$pid
wait \$pid
echo "run-rc=\$?"
EOF
in_alloc 2 bash "$dir/term.sh"
expect_contains "SIGTERM: exit status 128 + 15" "$out" "run-rc=143"
expect_contains "SIGTERM: the run says it was stopped" "$out" "stopped by SIGTERM, not restarting"
expect_eq "SIGTERM: no restart" "$(summaries | wc -l)" 1
if [ "$took" -lt 30 ]; then pass "SIGTERM: the step ended ($took s)"; else fail "SIGTERM: took $took s"; fi

# 6. A task prints, before it fails on n1, a line like srun's and one like the plugin's report,
# both naming n2. They pass through, but the summary names the real failure (rank 0 on n1) and the
# restart leaves n1 out, with the plugin's fail fast (its real report, which srun confirms) and
# without it (srun's own line).
for ddp in --ddp --ddp=keep-going; do
    in_alloc 2 "$TOOL" run --restarts=1 -N1 --ntasks-per-node=1 "$ddp" -- "$dir/prog.sh" lookalike-exit7 1
    expect_eq "look-alike lines ($ddp): the second run succeeded" "$rc" 0
    expect_contains "look-alike lines ($ddp): run 1 names the real failure" "$out" \
        "run 1 of 2 on n1 (SLURM_DDP_RESTARTS=0): failed, rank 0 on n1: exit status 7; restarting without n1 on n2"
    expect_contains "look-alike lines ($ddp): the task's lines pass through" "$out" \
        "srun: error: n2: task 0: Exited with exit code 9"
    expect_contains "look-alike lines ($ddp): srun's own line passes through" "$out" \
        "srun: error: n1: task 0: Exited with exit code 7"
done
# The same with the user's own -e: srun's stderr is read as before (documented: the look-alike
# line can then be taken), and the tasks' stderr goes to the user's file.
in_alloc 2 "$TOOL" run --restarts=1 -N1 --ntasks-per-node=1 -e "$dir/err.%j" -- "$dir/prog.sh" exit7 1
expect_eq "own -e: the second run succeeded" "$rc" 0
expect_contains "own -e: run 1 read from srun's stderr" "$out" \
    "run 1 of 2 on n1 (SLURM_DDP_RESTARTS=0): failed, rank 0 on n1: exit status 7; restarting without n1 on n2"
if grep -qs '^prog-stderr rank=0' "$dir"/err.*; then
    pass "own -e: the tasks' stderr went to the user's file"
else
    fail "own -e: no task stderr in $dir/err.*"
fi

# 7. SIGUSR1 between two runs, sent as soon as run 1's summary says it restarts: no srun runs
# then, or the next has just started and has no task yet (srun would drop the signal). It is held
# and passed to the next srun once that srun's tasks run; the program there takes it.
cat >"$dir/usr1.sh" <<'EOF'
#!/bin/bash
trap 'echo "prog got USR1 restarts=$SLURM_DDP_RESTARTS"; exit 0' USR1
[ "${SLURM_DDP_RESTARTS:-0}" = 0 ] && exit 7
for _ in $(seq 100); do sleep 0.1; done
echo "prog no USR1 restarts=$SLURM_DDP_RESTARTS"
exit 4
EOF
chmod 755 "$dir/usr1.sh"
cat >"$dir/between.sh" <<EOF
#!/bin/bash
"$TOOL" run --restarts=1 -N1 --ntasks-per-node=1 -- "$dir/usr1.sh" 2>"$dir/between.err" &
pid=\$!
for _ in \$(seq 500); do grep -q "restarting without" "$dir/between.err" && break; sleep 0.02; done
kill -USR1 \$pid
wait \$pid
echo "run-rc=\$?"
cat "$dir/between.err"
EOF
in_alloc 2 bash "$dir/between.sh"
expect_contains "USR1 between runs: the next run's program got it" "$out" "prog got USR1 restarts=1"
expect_contains "USR1 between runs: the command succeeded" "$out" "run-rc=0"
expect_contains "USR1 between runs: run 2 succeeded" "$out" \
    "run 2 of 2 on n2 (SLURM_DDP_RESTARTS=1): succeeded"

# 8. Outside an allocation, and bad input: clear errors, srun never started.
rc=0
out=$(env -u SLURM_JOB_ID "$TOOL" run -N1 -- true 2>&1) || rc=$?
expect_eq "no allocation: exit status" "$rc" 1
expect_contains "no allocation: names SLURM_JOB_ID" "$out" "SLURM_JOB_ID is not set"
rc=0
out=$("$TOOL" run --restarts=101 -N1 -- true 2>&1) || rc=$?
expect_eq "--restarts=101: usage error" "$rc" 2
expect_contains "--restarts=101: names the value and the range" "$out" \
    "--restarts='101' is not a count from 0 to 100"
finish
