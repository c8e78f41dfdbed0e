#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# `slurm-ddp stacks JOB.STEP`, run as root, on a hung 2-node --ddp step of 7 tasks (srun
# --multi-prog): ranks 0, 1 and 3 wait in a gloo barrier, rank 2 sleeps in stuck_here()
# (stacks_hang.py), rank 4 is a native program waiting in native_wait_here() (stacks_native.c),
# rank 5 is held in uninterruptible sleep (D) by vfork (stacks_dstate.c), rank 6 is Debian's
# /usr/bin/python3 waiting in wait_in_plain_python() (stacks_plain.py). The report must put the
# odd ones first, group ranks 0-1,3, show Python frames through py-spy and native ones through
# eu-stack or gdb, show rank 5's kernel stack without waiting on it, all within 15 s. The step's
# processes come from slurmstepd: a decoy started outside the step with the step's SLURM_JOB_ID,
# SLURM_STEP_ID and SLURMD_NODENAME is no rank, and no SLURM_DDP_PYSPY of a process (the decoy's
# or the ranks') is ever run as root. Without py-spy, gdb's py-bt gives rank 6's Python frames.
# A tool in a folder others may write is not used as root; a job that does not exist and a node
# without any native tool each give a named error and a non-zero exit.
source "$(dirname "$0")/lib.sh"
TOOL="$SDDP_BUILD_DIR/tools/slurm-ddp"
[ -x "$TOOL" ] || skip "slurm-ddp not built ($TOOL)"
[ "${SDDP_CLUSTER_NODES:-2}" -ge 2 ] || skip "needs 2 nodes"
command -v cc >/dev/null || skip "no C compiler for the native rank"
[ "$(id -u)" -eq 0 ] || skip "checks what stacks runs as root: run as root"
TORCH_ENV=$(bash "$SDDP_SOURCE_DIR/scripts/framework-env.sh" torch) ||
    { fail "the torch environment (scripts/framework-env.sh torch) could not be built"; finish; }
PY="$TORCH_ENV/bin/python"
PYSPY="$TORCH_ENV/bin/py-spy"
[ -x "$PYSPY" ] || { fail "no py-spy in the torch environment ($PYSPY)"; finish; }
WORK=$(mktemp -d "$SDDP_WORK_ROOT/sddp-stacks.XXXXXX")
chmod 755 "$WORK"
# Folders of tools that pass the root rule (root's, writable by root alone): /run is one.
TOOLS=$(mktemp -d /run/sddp-stacks.XXXXXX)
chmod 755 "$TOOLS"
NAME="sddp-stacks-$$"
SRUN_PID=
DECOY_PID=
cleanup() {
    scancel --name="$NAME" 2>/dev/null || true
    [ -n "$SRUN_PID" ] && kill "$SRUN_PID" 2>/dev/null || true
    [ -n "$DECOY_PID" ] && kill "$DECOY_PID" 2>/dev/null || true
    rm -rf "$WORK" "$TOOLS"
    use_plugin
}
trap cleanup EXIT
trap 'exit 1' INT TERM

cc -g -O0 -o "$WORK/stacks_native" "$SDDP_SOURCE_DIR/tests/integration/stacks_native.c"
cc -O0 -o "$WORK/stacks_dstate" "$SDDP_SOURCE_DIR/tests/integration/stacks_dstate.c"
cp "$SDDP_SOURCE_DIR/tests/integration/stacks_hang.py" "$SDDP_SOURCE_DIR/tests/integration/stacks_plain.py" "$WORK/"
cat >"$WORK/multi.conf" <<CONF
0-3 $PY $WORK/stacks_hang.py
4 $WORK/stacks_native
5 $WORK/stacks_dstate
6 /usr/bin/python3 $WORK/stacks_plain.py
CONF
# What a user would point SLURM_DDP_PYSPY at to have root run it: it leaves a mark.
cat >"$WORK/evil-pyspy" <<EVIL
#!/bin/sh
id -u >>"$WORK/evil-ran"
EVIL
chmod 755 "$WORK/evil-pyspy"
for t in scontrol srun gdb eu-stack; do
    p=$(command -v "$t" || true)
    [ -n "$p" ] || continue
    mkdir -p "$TOOLS/all"
    ln -s "$p" "$TOOLS/all/$t"
done
mkdir "$TOOLS/none" "$TOOLS/gdb-only"
ln -s "$(command -v scontrol)" "$TOOLS/none/scontrol"
ln -s "$(command -v srun)" "$TOOLS/none/srun"
ln -s "$(command -v scontrol)" "$TOOLS/gdb-only/scontrol"

# The hung step, bounded by its own time limit should everything below fail. Ranks 0, 2, 4 and 6
# on n1 (the node read alone below), 1, 3 and 5 on n2, so that the group of 0-1,3 spans both.
# Its processes carry a SLURM_DDP_PYSPY of their own that root must never run.
printf '%s\n' n1 n2 n1 n2 n1 n2 n1 >"$WORK/hosts"
SLURM_HOSTFILE="$WORK/hosts" SLURM_DDP_PYSPY="$WORK/evil-pyspy" timeout 300 srun --ddp -J "$NAME" \
    -t 4 -n7 -m arbitrary --multi-prog "$WORK/multi.conf" >"$WORK/step.out" 2>&1 &
SRUN_PID=$!
ready=0
for _ in $(seq 1 240); do
    ready=$(grep -c '^HANG-READY' "$WORK/step.out" || true)
    [ "$ready" -ge 7 ] && break
    kill -0 "$SRUN_PID" 2>/dev/null || break
    sleep 0.5
done
if [ "$ready" -lt 7 ]; then
    fail "the hung step did not start its 7 ranks within 120 s:"
    cat "$WORK/step.out"
    finish
fi
sleep 1  # ranks 0, 1, 3 enter the barrier after their line
JOB=$(squeue -h -n "$NAME" -o %i | head -1)
[ -n "$JOB" ] || { fail "no job named $NAME in squeue"; finish; }

# The decoy: any user's Python process outside the step that claims its ids on n1.
setpriv --reuid=65534 --regid=65534 --clear-groups env -i PATH=/usr/bin:/bin SLURM_JOB_ID="$JOB" \
    SLURM_STEP_ID=0 SLURMD_NODENAME=n1 RANK=9 SLURM_PROCID=9 SLURM_DDP_PYSPY="$WORK/evil-pyspy" \
    /usr/bin/python3 -c 'import time; time.sleep(600)' &
DECOY_PID=$!
sleep 0.5
kill -0 "$DECOY_PID" || fail "the decoy did not start"

t0=$(date +%s.%N)
RC=0
OUT=$(SLURM_DDP_PYSPY="$PYSPY" timeout 60 "$TOOL" stacks "$JOB.0" 2>"$WORK/err") || RC=$?
SECS=$(printf '%.1f' "$(echo "$(date +%s.%N) - $t0" | bc)")
ERR=$(cat "$WORK/err")
echo "$OUT"
[ -n "$ERR" ] && echo "stderr: $ERR"
expect_eq "stacks $JOB.0 exits 0" "$RC" 0
# A tool waiting on rank 5 would have held the report until the tools' bound (about 22 s).
if (($(echo "$SECS < 15" | bc))); then pass "stacks took ${SECS}s (< 15 s)"; else fail "stacks took ${SECS}s (>= 15 s): something waited on the rank in D"; fi
headers=$(grep '^=== ' <<<"$OUT" || true)
expect_eq "five groups" "$(wc -l <<<"$headers")" 5
expect_contains "rank 2 is the first odd one out" "$(sed -n 1p <<<"$headers")" "=== 1 process: rank 2 ("
expect_contains "rank 4 (native) next" "$(sed -n 2p <<<"$headers")" "=== 1 process: rank 4 ("
expect_contains "rank 5 (in D) next, its kernel stack" "$(sed -n 3p <<<"$headers")" "=== 1 process: rank 5 (n2 pid"
expect_contains "rank 6 next" "$(sed -n 4p <<<"$headers")" "=== 1 process: rank 6 ("
expect_contains "ranks 0-1,3 grouped, last" "$(sed -n 5p <<<"$headers")" "=== 3 processes: ranks 0-1,3 (n[1-2], py-spy)"
section() { awk -v h="$1" 'index($0, h) == 1 {on=1; next} /^=== /{on=0} on' <<<"$2"; }
rank2=$(section "=== 1 process: rank 2 " "$OUT")
rank4=$(section "=== 1 process: rank 4 " "$OUT")
rank5=$(section "=== 1 process: rank 5 " "$OUT")
rank6=$(section "=== 1 process: rank 6 " "$OUT")
group=$(section "=== 3 processes" "$OUT")
expect_contains "rank 2's stack names stuck_here" "$rank2" "stuck_here (stacks_hang.py:"
expect_contains "rank 2 read by our py-spy" "$(sed -n 1p <<<"$headers")" "py-spy)"
expect_contains "the group waits in the barrier" "$group" "wait_in_barrier (stacks_hang.py:"
expect_contains "rank 4's native frames" "$rank4" "native_wait_here"
expect_not_contains "no Python frame in rank 4" "$rank4" ".py:"
expect_contains "rank 5 is said to be in D" "$rank5" "in uninterruptible sleep (D) in "
expect_contains "rank 5 read by no tool" "$(sed -n 3p <<<"$headers")" ", kernel)"
expect_contains "rank 5's kernel stack shows the vfork it waits in" "$rank5" "vfork [kernel]"
expect_contains "rank 6 (Debian's python3) read by py-spy" "$rank6" "wait_in_plain_python (stacks_plain.py:"
expect_not_contains "the decoy (pid $DECOY_PID) is no rank" "$OUT$ERR" "pid $DECOY_PID"
expect_not_contains "the decoy's RANK=9 is nowhere" "$OUT$ERR" "rank 9"
expect_eq "no SLURM_DDP_PYSPY of a process was run" "$(cat "$WORK/evil-ran" 2>/dev/null)" ""

# The newest step of the job when none is named.
RC=0
OUT2=$(SLURM_DDP_PYSPY="$PYSPY" timeout 60 "$TOOL" stacks "$JOB" 2>&1) || RC=$?
expect_eq "stacks $JOB (no step) exits 0" "$RC" 0
expect_contains "stacks $JOB finds step 0" "$OUT2" "=== 3 processes: ranks 0-1,3"

# n1's part alone (the nodes share this machine's process table) with no py-spy of ours: the
# ranks' own (beside their interpreter, their SLURM_DDP_PYSPY) is not run as root, and gdb's
# py-bt, with Debian's python3-dbg, gives rank 6's Python frames.
if dpkg -s python3-dbg >/dev/null 2>&1 && [ -x "$TOOLS/all/gdb" ]; then
    RC=0
    OUT7=$(env -u SLURM_DDP_PYSPY PATH="$TOOLS/all" SLURMD_NODENAME=n1 "$TOOL" stacks --local "$JOB.0" --report --timeout=25 2>&1) || RC=$?
    echo "$OUT7"
    expect_eq "n1 without our py-spy exits 0" "$RC" 0
    expect_contains "rank 6 read by gdb py-bt" "$OUT7" "=== 1 process: rank 6 (n1 pid"
    expect_contains "rank 6 through py-bt" "$(grep '=== 1 process: rank 6 ' <<<"$OUT7")" "gdb py-bt)"
    expect_contains "rank 6's Python function, not only C frames" "$(section "=== 1 process: rank 6 " "$OUT7")" "wait_in_plain_python (stacks_plain.py:"
    expect_contains "rank 2 is read" "$OUT7" "=== 1 process: rank 2 (n1 pid"
    expect_not_contains "rank 2 not read by the py-spy beside its interpreter" "$(grep '=== 1 process: rank 2 ' <<<"$OUT7")" "py-spy"
    # pyenv installs the interpreter's extension beside it; root-owned, it is allowed to gdb.
    if [ -f "$(readlink -f "$PY")-gdb.py" ]; then
        expect_contains "rank 2 through the extension beside its interpreter" "$(section "=== 1 process: rank 2 " "$OUT7")" "stuck_here (stacks_hang.py:"
    fi
    expect_not_contains "the decoy is no rank on n1 either" "$OUT7" "pid $DECOY_PID"
    expect_eq "still no SLURM_DDP_PYSPY of a process was run" "$(cat "$WORK/evil-ran" 2>/dev/null)" ""
else
    echo "note: python3-dbg or gdb missing (tests/cluster/install-deps.sh installs them): py-bt not checked"
fi

# No native tool on the node: the native rank is named with what to install.
RC=0
OUT3=$(env SLURM_DDP_PYSPY="$PYSPY" PATH="$TOOLS/none" SLURMD_NODENAME=n1 "$TOOL" stacks --local "$JOB.0" --report 2>&1) || RC=$?
grep '^error:' <<<"$OUT3" || true
expect_eq "a node without eu-stack/gdb exits 1" "$RC" 1
expect_contains "the missing tool is named" "$OUT3" "error: rank 4 (n1 pid"
expect_contains "what to install" "$OUT3" "install elfutils (eu-stack) or gdb"
expect_contains "rank 2 is still read by our py-spy" "$OUT3" "stuck_here (stacks_hang.py:"

# Where the site turns --ddp on for every step and fail fast with it (default=on fail-fast=all),
# the collectors' own step stays out of DDP: n1's collector fails (no native tool for rank 4),
# and n2's report still arrives; nothing asks slurmctld to end the collectors' step.
use_plugin default=on fail-fast=all
RC=0
OUT9=$(timeout 60 env SLURM_DDP_PYSPY="$PYSPY" PATH="$TOOLS/none" "$TOOL" stacks "$JOB.0" 2>&1) || RC=$?
use_plugin
expect_eq "default=on fail-fast=all: one collector failing exits 1" "$RC" 1
expect_contains "n1's collector names what it lacks" "$OUT9" "install elfutils (eu-stack) or gdb"
expect_contains "n2's report arrives all the same (rank 5 in D)" "$OUT9" "=== 1 process: rank 5 (n2 pid"
expect_not_contains "no node went unreported" "$OUT9" "did not report"
sleep 1
expect_eq "no fail-fast request for the collectors' step" \
    "$(cat "$SDDP_CLUSTER_DIR"/log/slurmd-n*.log | grep -c "fail-fast: asked slurmctld to end step $JOB\.[1-9]" || true)" 0

# A gdb in a folder others may write is not run as root, and the error says why.
mkdir "$WORK/gdb-only"
ln -s "$(command -v gdb || echo /usr/bin/gdb)" "$WORK/gdb-only/gdb"
RC=0
OUT8=$(env -u SLURM_DDP_PYSPY PATH="$WORK/gdb-only:$TOOLS/none" SLURMD_NODENAME=n1 "$TOOL" stacks --local "$JOB.0" --report 2>&1) || RC=$?
expect_eq "a gdb in a folder others may write is not used as root" "$RC" 1
expect_contains "rank 4 says which gdb was refused and why" "$(grep 'error: rank 4 ' <<<"$OUT8")" "not used as root: $WORK/gdb-only/gdb: "

# gdb where eu-stack is missing.
if command -v gdb >/dev/null; then
    ln -s "$(command -v gdb)" "$TOOLS/gdb-only/gdb"
    RC=0
    OUT6=$(env -u SLURM_DDP_PYSPY PATH="$TOOLS/gdb-only" SLURMD_NODENAME=n1 "$TOOL" stacks --local "$JOB.0" --report --timeout=25 2>&1) || RC=$?
    grep '^error:' <<<"$OUT6" || true
    expect_eq "gdb reads the native rank" "$RC" 0
    expect_contains "gdb is named for rank 4" "$OUT6" "=== 1 process: rank 4 (n1 pid"
    expect_contains "gdb's frames for rank 4" "$(section "=== 1 process: rank 4 " "$OUT6")" "native_wait_here (stacks_native.c:"
fi

scancel --name="$NAME"
wait "$SRUN_PID" 2>/dev/null || true
SRUN_PID=
kill "$DECOY_PID" 2>/dev/null || true
wait "$DECOY_PID" 2>/dev/null || true
DECOY_PID=

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
