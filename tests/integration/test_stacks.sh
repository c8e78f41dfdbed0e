#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# `slurm-ddp stacks JOB.STEP` on a hung 2-node --ddp step of 5 tasks (srun --multi-prog): ranks
# 0, 1 and 3 wait in a gloo barrier, rank 2 sleeps in stuck_here() (stacks_hang.py), rank 4 is a
# native program waiting in native_wait_here() (stacks_native.c). The report must put the odd
# ones first (rank 2, then rank 4), group ranks 0-1,3, show Python frames through py-spy and
# native ones through eu-stack or gdb, within 30 s; a job that does not exist and a node without
# any native tool must each give a named error and a non-zero exit.
source "$(dirname "$0")/lib.sh"
TOOL="$SDDP_BUILD_DIR/tools/slurm-ddp"
[ -x "$TOOL" ] || skip "slurm-ddp not built ($TOOL)"
[ "${SDDP_CLUSTER_NODES:-2}" -ge 2 ] || skip "needs 2 nodes"
command -v cc >/dev/null || skip "no C compiler for the native rank"
TORCH_ENV=$(bash "$SDDP_SOURCE_DIR/scripts/framework-env.sh" torch) ||
    { fail "the torch environment (scripts/framework-env.sh torch) could not be built"; finish; }
PY="$TORCH_ENV/bin/python"
WORK=$(mktemp -d /tmp/sddp-stacks.XXXXXX)
chmod 755 "$WORK"
NAME="sddp-stacks-$$"
SRUN_PID=
cleanup() {
    scancel --name="$NAME" 2>/dev/null || true
    [ -n "$SRUN_PID" ] && kill "$SRUN_PID" 2>/dev/null || true
    rm -rf "$WORK"
    use_plugin
}
trap cleanup EXIT
trap 'exit 1' INT TERM

cc -g -O0 -o "$WORK/stacks_native" "$SDDP_SOURCE_DIR/tests/integration/stacks_native.c"
cp "$SDDP_SOURCE_DIR/tests/integration/stacks_hang.py" "$WORK/"
cat >"$WORK/multi.conf" <<CONF
0-3 $PY $WORK/stacks_hang.py
4 $WORK/stacks_native
CONF

# The hung step, bounded by its own time limit should everything below fail. Cyclic: ranks 0, 2
# and 4 on n1, 1 and 3 on n2, so the group of 0-1,3 spans both nodes.
timeout 300 srun --ddp -J "$NAME" -t 4 -N2 -n5 -m cyclic --multi-prog "$WORK/multi.conf" \
    >"$WORK/step.out" 2>&1 &
SRUN_PID=$!
ready=0
for _ in $(seq 1 240); do
    ready=$(grep -c '^HANG-READY' "$WORK/step.out" || true)
    [ "$ready" -ge 5 ] && break
    kill -0 "$SRUN_PID" 2>/dev/null || break
    sleep 0.5
done
if [ "$ready" -lt 5 ]; then
    fail "the hung step did not start its 5 ranks within 120 s:"
    cat "$WORK/step.out"
    finish
fi
sleep 1  # ranks 0, 1, 3 enter the barrier after their line
JOB=$(squeue -h -n "$NAME" -o %i | head -1)
[ -n "$JOB" ] || { fail "no job named $NAME in squeue"; finish; }

t0=$(date +%s.%N)
RC=0
OUT=$(timeout 60 "$TOOL" stacks "$JOB.0" 2>"$WORK/err") || RC=$?
SECS=$(printf '%.1f' "$(echo "$(date +%s.%N) - $t0" | bc)")
ERR=$(cat "$WORK/err")
echo "$OUT"
[ -n "$ERR" ] && echo "stderr: $ERR"
expect_eq "stacks $JOB.0 exits 0" "$RC" 0
if (($(echo "$SECS < 30" | bc))); then pass "stacks took ${SECS}s (< 30 s)"; else fail "stacks took ${SECS}s (>= 30 s)"; fi
headers=$(grep '^=== ' <<<"$OUT" || true)
expect_eq "three groups" "$(wc -l <<<"$headers")" 3
expect_contains "rank 2 is the first odd one out" "$(sed -n 1p <<<"$headers")" "=== 1 process: rank 2 ("
expect_contains "rank 4 (native) next" "$(sed -n 2p <<<"$headers")" "=== 1 process: rank 4 ("
expect_contains "ranks 0-1,3 grouped, last" "$(sed -n 3p <<<"$headers")" "=== 3 processes: ranks 0-1,3 (n[1-2], py-spy)"
rank2=$(awk '/^=== 1 process: rank 2 /{on=1; next} /^=== /{on=0} on' <<<"$OUT")
rank4=$(awk '/^=== 1 process: rank 4 /{on=1; next} /^=== /{on=0} on' <<<"$OUT")
group=$(awk '/^=== 3 processes/{on=1; next} /^=== /{on=0} on' <<<"$OUT")
expect_contains "rank 2's stack names stuck_here" "$rank2" "stuck_here (stacks_hang.py:"
expect_contains "rank 2 read by py-spy" "$(sed -n 1p <<<"$headers")" "py-spy)"
expect_contains "the group waits in the barrier" "$group" "wait_in_barrier (stacks_hang.py:"
expect_contains "rank 4's native frames" "$rank4" "native_wait_here"
expect_not_contains "no Python frame in rank 4" "$rank4" ".py:"

# The newest step of the job when none is named.
RC=0
OUT2=$(timeout 60 "$TOOL" stacks "$JOB" 2>&1) || RC=$?
expect_eq "stacks $JOB (no step) exits 0" "$RC" 0
expect_contains "stacks $JOB finds step 0" "$OUT2" "=== 3 processes: ranks 0-1,3"

# No native tool on the node: the native rank is named with what to install (the part that
# runs on each node, run here: the nodes share this machine's process table).
RC=0
OUT3=$(env PATH=/nonexistent SLURMD_NODENAME=n1 "$TOOL" stacks --local "$JOB.0" --report 2>&1) || RC=$?
expect_eq "a node without eu-stack/gdb exits 1" "$RC" 1
expect_contains "the missing tool is named" "$OUT3" "error: rank 4 (n1 pid"
expect_contains "what to install" "$OUT3" "install elfutils (eu-stack) or gdb"
expect_contains "rank 2 is still read by the py-spy beside its interpreter" "$OUT3" "stuck_here (stacks_hang.py:"

# gdb where eu-stack is missing.
if command -v gdb >/dev/null; then
    mkdir "$WORK/gdb-only"
    ln -s "$(command -v gdb)" "$WORK/gdb-only/gdb"
    RC=0
    OUT6=$(env PATH="$WORK/gdb-only" SLURMD_NODENAME=n1 "$TOOL" stacks --local "$JOB.0" --report --timeout=20 2>&1) || RC=$?
    expect_eq "gdb reads the native rank" "$RC" 0
    expect_contains "gdb is named for rank 4" "$OUT6" "=== 1 process: rank 4 (n1 pid"
    expect_contains "gdb's frames for rank 4" "$(awk '/rank 4 /{on=1; next} /^=== /{on=0} on' <<<"$OUT6")" "native_wait_here (stacks_native.c:"
fi

scancel --name="$NAME"
wait "$SRUN_PID" 2>/dev/null || true
SRUN_PID=

# --ddp=debug: a library rendezvous that times out leaves its node's stacks in the step's debug
# directory. Rank 0 (c_minimal, the library) waits for rank 1, a native program that never joins.
C_MINIMAL="$SDDP_BUILD_DIR/examples/c_minimal/c_minimal"
if [ -x "$C_MINIMAL" ]; then
    cat >"$WORK/debug.conf" <<CONF
0 $C_MINIMAL
1 $WORK/stacks_native
CONF
    DNAME="$NAME-debug"
    t0=$(date +%s)
    SLURM_DDP_CHECK_TOOL="$TOOL" timeout 120 srun --ddp=debug="$WORK/dbg",timeout=4 -J "$DNAME" \
        -t 2 -N1 -n2 -w n1 --multi-prog "$WORK/debug.conf" >"$WORK/debug.out" 2>&1 &
    SRUN_PID=$!
    file=
    for _ in $(seq 1 60); do
        file=$(ls "$WORK"/dbg/*/stacks.n1.txt 2>/dev/null | head -1 || true)
        [ -n "$file" ] && grep -q 'timed out' "$WORK/debug.out" && break
        sleep 0.5
    done
    secs=$(($(date +%s) - t0))
    scancel --name="$DNAME" 2>/dev/null || true
    wait "$SRUN_PID" 2>/dev/null || true
    SRUN_PID=
    if [ -z "$file" ]; then
        fail "no stacks.n1.txt in the debug directory after the rendezvous timeout:"
        cat "$WORK/debug.out"
        ls -lR "$WORK/dbg" 2>/dev/null || true
    else
        cat "$file"
        report=$(cat "$file")
        expect_contains "the debug directory holds rank 1's native stack" "$report" "native_wait_here"
        expect_contains "rank 1 is named" "$report" "rank 1 (n1 pid"
        expect_contains "rank 0 failed with its timeout" "$(cat "$WORK/debug.out")" "timed out"
        if [ "$secs" -le 20 ]; then pass "timeout + stacks within ${secs}s"; else fail "timeout + stacks took ${secs}s"; fi
    fi
else
    echo "note: $C_MINIMAL not built: the --ddp=debug stacks are not checked"
fi

# A job that does not exist, and a malformed argument.
RC=0
OUT4=$(timeout 30 "$TOOL" stacks 99999999 2>&1) || RC=$?
expect_eq "a job that does not exist exits 1" "$RC" 1
expect_contains "it names the job" "$OUT4" "job 99999999"
RC=0
OUT5=$(timeout 30 "$TOOL" stacks 12.batch 2>&1) || RC=$?
expect_eq "a malformed step exits 1" "$RC" 1
expect_contains "it shows the syntax" "$OUT5" "JOBID.STEPID"
finish
