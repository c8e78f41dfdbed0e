#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# `slurm-ddp run` against a fake srun on PATH (no cluster): what it passes to srun (options,
# nodes, SLURM_DDP_RESTARTS and its job marker), restarts across a 3-node allocation, the
# plugin's report preferred over srun's lines, stderr passed through, signals forwarded, and srun
# missing from PATH.
# usage: test_run_fake_srun.sh PATH_TO_slurm-ddp
set -uo pipefail
TOOL=${1:?usage: $0 PATH_TO_slurm-ddp}
dir=$(mktemp -d /tmp/sddp-fake-srun.XXXXXX)
trap 'rm -rf "$dir"' EXIT
FAILURES=0
fail() { echo "FAIL: $*"; FAILURES=$((FAILURES + 1)); }
pass() { echo "ok: $*"; }
expect_eq() { if [ "$2" == "$3" ]; then pass "$1"; else fail "$1: got '$2', expected '$3'"; fi; }
expect_contains() {
    if grep -qF -- "$3" <<<"$2"; then pass "$1"; else fail "$1: '$3' not in:"; echo "$2"; fi
}

# The fake srun: logs one line per call (restart count, its job marker, the arguments), then acts
# out the line of $dir/script whose number is the call's (1-based): "ok", "exit N", a line for
# stderr ("say TEXT", repeatable, separated by '|'), or "sleep" (wait for a signal, log it).
mkdir "$dir/bin"
cat >"$dir/bin/srun" <<'EOF'
#!/bin/bash
d=$(dirname "$0")/..
n=$(( $(cat "$d/calls" 2>/dev/null | wc -l) + 1 ))
echo "call $n restarts=${SLURM_DDP_RESTARTS-unset} job=${SLURM_DDP_RESTARTS_JOB-unset} ntasks=${SLURM_NTASKS-unset} args=$*" >>"$d/calls"
IFS='|' read -ra acts <<<"$(sed -n "${n}p" "$d/script")"
for act in "${acts[@]}"; do
    case $act in
        ok) exit 0 ;;
        exit\ *) exit "${act#exit }" ;;
        say\ *) echo "${act#say }" >&2 ;;
        sleep)
            trap 'echo "srun got USR1" >>"$d/calls"' USR1
            trap 'echo "srun got TERM" >>"$d/calls"; exit 143' TERM
            for _ in $(seq 100); do sleep 0.1; done
            exit 0 ;;
    esac
done
EOF
chmod 755 "$dir/bin/srun"
run() {  # run SCRIPT_LINES TOOL_ARGS...: sets $out, $rc, $calls
    printf '%s\n' "$1" >"$dir/script"
    shift
    rm -f "$dir/calls"
    rc=0
    out=$(PATH="$dir/bin:$PATH" SLURM_JOB_ID=42 SLURM_JOB_NODELIST='n[1-3]' SLURM_RESTART_COUNT= SLURM_NTASKS=12 \
        timeout 60 "$TOOL" run "$@" 2>&1) || rc=$?
    calls=$(cat "$dir/calls" 2>/dev/null)
}

# Two failures on a 3-node allocation with a 1-node step; the third run succeeds.
run "say srun: error: n1: task 0: Exited with exit code 7|exit 7
say srun: error: n2: task 0: Segmentation fault (core dumped)|exit 139
ok" --restarts=2 -N1 -l -- ./train --lr 1
expect_eq "3 runs: exit 0" "$rc" 0
expect_contains "run 1: srun gets --ddp, kill-on-bad-exit, the nodes, the user's options and program, not the allocation's SLURM_NTASKS" \
    "$calls" "call 1 restarts=0 job=42 ntasks=unset args=--ddp --kill-on-bad-exit=1 --nodes=1 --nodelist=n1 -l ./train --lr 1"
expect_contains "run 2 without n1, restart count 1" "$calls" "call 2 restarts=1 job=42 ntasks=unset args=--ddp --kill-on-bad-exit=1 --nodes=1 --nodelist=n2 -l"
expect_contains "run 3 without n1 and n2, restart count 2" "$calls" "call 3 restarts=2 job=42 ntasks=unset args=--ddp --kill-on-bad-exit=1 --nodes=1 --nodelist=n3 -l"
expect_contains "summary 1" "$out" "slurm-ddp run: run 1 of 3 on n1 (SLURM_DDP_RESTARTS=0): failed, rank 0 on n1: exit status 7; restarting without n1 on n2"
expect_contains "summary 2" "$out" "slurm-ddp run: run 2 of 3 on n2 (SLURM_DDP_RESTARTS=1): failed, rank 0 on n2: signal 11 (SIGSEGV); restarting without n2 on n3"
expect_contains "summary 3" "$out" "slurm-ddp run: run 3 of 3 on n3 (SLURM_DDP_RESTARTS=2): succeeded"
expect_contains "srun's stderr passes through" "$out" "srun: error: n2: task 0: Segmentation fault (core dumped)"

# The plugin's report wins over srun's first line; the user's --ddp and -K are kept, not doubled;
# SLURM_RESTART_COUNT of a requeued job is where the count starts.
printf '%s\n' "say srun: error: n1: tasks 0-1: Killed|say srun: error: slurm-ddp: rank 3 on n2 ended with exit status 5; ending the other ranks of step 42.0|exit 137" "ok" >"$dir/script"
rm -f "$dir/calls"
rc=0
out=$(PATH="$dir/bin:$PATH" SLURM_JOB_ID=42 SLURM_JOB_NODELIST='n[1-3]' SLURM_RESTART_COUNT=1 SLURM_NTASKS=12 \
    timeout 60 "$TOOL" run --restarts=1 -N2 --ddp=verbose -K1 -n4 -- ./train 2>&1) || rc=$?
calls=$(cat "$dir/calls")
expect_eq "plugin report: exit 0 after the restart" "$rc" 0
expect_contains "plugin report: run 1 names rank 3 on n2" "$out" "run 1 of 2 on n[1-2] (SLURM_DDP_RESTARTS=1): failed, rank 3 on n2: exit status 5; restarting without n2 on n[1,3]"
expect_contains "plugin report: user's --ddp and -K only; with -n the task count stays" "$calls" "call 1 restarts=1 job=42 ntasks=12 args=--nodes=2 --nodelist=n[1-2] --ddp=verbose -K1 -n4 ./train"
expect_contains "requeued job: the restart counts on from SLURM_RESTART_COUNT" "$calls" "call 2 restarts=2"

# No failed node named: no restart; srun's status.
run "say srun: error: Unable to create step for job 42: Requested node configuration is not available|exit 1
ok" --restarts=2 -N1 -- ./train
expect_eq "unnamed failure: srun's status" "$rc" 1
expect_eq "unnamed failure: one call" "$(grep -c '^call' <<<"$calls")" 1
expect_contains "unnamed failure: says why" "$out" "not restarting: no failed node to leave out"

# Signals: USR1 goes on to srun, TERM stops without a restart.
printf '%s\n' "sleep" "ok" >"$dir/script"
rm -f "$dir/calls"
PATH="$dir/bin:$PATH" SLURM_JOB_ID=42 SLURM_JOB_NODELIST='n[1-3]' \
    "$TOOL" run --restarts=2 -N1 -- ./train >"$dir/out" 2>&1 &
pid=$!
for _ in $(seq 50); do [ -s "$dir/calls" ] && break; sleep 0.1; done
sleep 0.3
kill -USR1 "$pid"
sleep 0.5
kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
calls=$(cat "$dir/calls")
expect_eq "SIGTERM: 128 + 15" "$rc" 143
expect_contains "SIGUSR1 reached srun" "$calls" "srun got USR1"
expect_contains "SIGTERM reached srun" "$calls" "srun got TERM"
expect_eq "SIGTERM: no restart" "$(grep -c '^call' <<<"$calls")" 1
expect_contains "SIGTERM: summary" "$(cat "$dir/out")" "stopped by SIGTERM, not restarting"

# srun missing.
rc=0
out=$(PATH=/nonexistent SLURM_JOB_ID=42 SLURM_JOB_NODELIST='n[1-3]' "$TOOL" run -N1 -- ./train 2>&1) || rc=$?
expect_eq "no srun: 127" "$rc" 127
expect_contains "no srun: says so" "$out" "cannot start srun"

if [ "$FAILURES" -ne 0 ]; then echo "$FAILURES check(s) failed"; exit 1; fi
echo "all checks passed"
