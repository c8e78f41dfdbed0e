#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# `slurm-ddp run` against a fake srun on PATH (no cluster): what it passes to srun (options,
# nodes, SLURM_DDP_RESTARTS and its job marker, --error=/dev/fd/N for the tasks' stderr),
# restarts across a 3-node allocation, the plugin's report preferred over srun's lines only when
# srun confirms it, a task's look-alike lines not taken for srun's, stderr passed through,
# signals forwarded (also those that come between two runs), and srun missing from PATH.
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
expect_not_contains() {
    if grep -qF -- "$3" <<<"$2"; then fail "$1: '$3' in:"; echo "$2"; else pass "$1"; fi
}

# The fake srun: logs one line per call (restart count, its job marker, the arguments, a
# /dev/fd/NUMBER among them written /dev/fd/N), then acts out the line of $dir/script whose
# number is the call's (1-based), acts separated by '|': "ok", "exit N", "say TEXT" (srun's own
# stderr), "task TEXT" (a task's stderr: into the --error file, as srun writes it, else srun's
# stderr), "hold" (a process of its own keeps srun's stderr open until $dir/release is written),
# "sleep" (wait for a signal, log it), "late-usr1" (take SIGUSR1 only after 0.5 s, as srun sets
# itself up; log it and exit 0; exit 3 after 10 s without). Call N writes its pid to $dir/pid.N.
mkdir "$dir/bin"
mkfifo "$dir/release"
cat >"$dir/bin/srun" <<'EOF'
#!/bin/bash
d=$(dirname "$0")/..
n=$(( $(grep -c '^call' "$d/calls" 2>/dev/null) + 1 ))
echo $$ >"$d/pid.$n"
task_err=/dev/stderr
for a in "$@"; do case $a in --error=/dev/fd/*) task_err=${a#--error=} ;; esac; done
echo "call $n restarts=${SLURM_DDP_RESTARTS-unset} job=${SLURM_DDP_RESTARTS_JOB-unset} ntasks=${SLURM_NTASKS-unset} args=$(sed -E 's|/dev/fd/[0-9]+|/dev/fd/N|g' <<<"$*")" >>"$d/calls"
IFS='|' read -ra acts <<<"$(sed -n "${n}p" "$d/script")"
for act in "${acts[@]}"; do
    case $act in
        ok) exit 0 ;;
        exit\ *) exit "${act#exit }" ;;
        say\ *) echo "${act#say }" >&2 ;;
        task\ *) echo "${act#task }" >>"$task_err" ;;
        hold) (cat "$d/release" >/dev/null) & ;;
        sleep)
            trap 'echo "srun got USR1" >>"$d/calls"' USR1
            trap 'echo "srun got TERM" >>"$d/calls"; exit 143' TERM
            for _ in $(seq 100); do sleep 0.1; done
            exit 0 ;;
        late-usr1)
            sleep 0.5
            trap 'echo "srun $n got USR1" >>"$d/calls"; exit 0' USR1
            for _ in $(seq 100); do sleep 0.1; done
            exit 3 ;;
    esac
done
EOF
chmod 755 "$dir/bin/srun"
run() {  # run SCRIPT_LINES TOOL_ARGS...: sets $out, $rc, $calls
    printf '%s\n' "$1" >"$dir/script"
    shift
    rm -f "$dir/calls" "$dir"/pid.*
    rc=0
    out=$(PATH="$dir/bin:$PATH" SLURM_JOB_ID=42 SLURM_JOB_NODELIST='n[1-3]' SLURM_RESTART_COUNT= SLURM_NTASKS=12 \
        timeout 60 "$TOOL" run "$@" 2>&1) || rc=$?
    calls=$(cat "$dir/calls" 2>/dev/null)
}
# start_bg SCRIPT_LINES TOOL_ARGS...: the command in the background ($pid), output in $dir/out
start_bg() {
    printf '%s\n' "$1" >"$dir/script"
    shift
    rm -f "$dir/calls" "$dir"/pid.*
    PATH="$dir/bin:$PATH" SLURM_JOB_ID=42 SLURM_JOB_NODELIST='n[1-3]' SLURM_RESTART_COUNT= \
        "$TOOL" run "$@" >"$dir/out" 2>&1 &
    pid=$!
}
finish_bg() {  # waits for the background command: sets $rc, $out, $calls
    rc=0
    wait "$pid" || rc=$?
    out=$(cat "$dir/out")
    calls=$(cat "$dir/calls" 2>/dev/null)
}
wait_for_file() { for _ in $(seq 100); do [ -s "$1" ] && return 0; sleep 0.05; done; return 1; }
# Until fake srun N has ended and been reaped by slurm-ddp run (a zombie still takes kill -0): no
# srun runs then, only the process that "hold" left keeps the run from ending.
wait_reaped() {
    local p
    wait_for_file "$dir/pid.$1" || return 1
    p=$(cat "$dir/pid.$1")
    for _ in $(seq 200); do kill -0 "$p" 2>/dev/null || return 0; sleep 0.05; done
    return 1
}

# Two failures on a 3-node allocation with a 1-node step; the third run succeeds.
run "say srun: error: n1: task 0: Exited with exit code 7|exit 7
say srun: error: n2: task 0: Segmentation fault (core dumped)|exit 139
ok" --restarts=2 -N1 -l -- ./train --lr 1
expect_eq "3 runs: exit 0" "$rc" 0
expect_contains "run 1: srun gets the tasks' stderr apart, --ddp, kill-on-bad-exit, the nodes, the user's options and program, not the allocation's SLURM_NTASKS" \
    "$calls" "call 1 restarts=0 job=42 ntasks=unset args=--error=/dev/fd/N --ddp --kill-on-bad-exit=1 --nodes=1 --nodelist=n1 -l ./train --lr 1"
expect_contains "run 2 without n1, restart count 1" "$calls" "call 2 restarts=1 job=42 ntasks=unset args=--error=/dev/fd/N --ddp --kill-on-bad-exit=1 --nodes=1 --nodelist=n2 -l"
expect_contains "run 3 without n1 and n2, restart count 2" "$calls" "call 3 restarts=2 job=42 ntasks=unset args=--error=/dev/fd/N --ddp --kill-on-bad-exit=1 --nodes=1 --nodelist=n3 -l"
expect_contains "summary 1" "$out" "slurm-ddp run: run 1 of 3 on n1 (SLURM_DDP_RESTARTS=0): failed, rank 0 on n1: exit status 7; restarting without n1 on n2"
expect_contains "summary 2" "$out" "slurm-ddp run: run 2 of 3 on n2 (SLURM_DDP_RESTARTS=1): failed, rank 0 on n2: signal 11 (SIGSEGV); restarting without n2 on n3"
expect_contains "summary 3" "$out" "slurm-ddp run: run 3 of 3 on n3 (SLURM_DDP_RESTARTS=2): succeeded"
expect_contains "srun's stderr passes through" "$out" "srun: error: n2: task 0: Segmentation fault (core dumped)"

# A task prints what looks like srun's report (naming n2, not in the run) before srun's own:
# the summary names srun's, and both lines reach the user.
run "task srun: error: n2: task 0: Exited with exit code 9|task a task's last words|say srun: error: n1: task 0: Exited with exit code 7|exit 7
ok" --restarts=1 -N1 -- ./train
expect_eq "look-alike line: restarted, exit 0" "$rc" 0
expect_contains "look-alike line: run 1 names srun's own report" "$out" \
    "run 1 of 2 on n1 (SLURM_DDP_RESTARTS=0): failed, rank 0 on n1: exit status 7; restarting without n1 on n2"
expect_contains "look-alike line: the task's stderr passes through" "$out" "srun: error: n2: task 0: Exited with exit code 9"
expect_contains "look-alike line: every task line passes through" "$out" "a task's last words"

# The plugin's report (on the tasks' stream, as slurmstepd's messages travel) wins over srun's
# first line once srun confirms it; a task's look-alike report, which srun does not confirm, is
# not taken. The user's --ddp and -K are kept, not doubled; SLURM_RESTART_COUNT of a requeued job
# is where the count starts.
printf '%s\n' "task slurmstepd-n1: error: slurm-ddp: rank 0 on n1 ended with exit status 9; ending the other ranks of step 42.0|task slurmstepd-n2: error: slurm-ddp: rank 3 on n2 ended with exit status 5; ending the other ranks of step 42.0|say srun: error: n1: tasks 0-1: Killed|say srun: error: n2: tasks 2-3: Exited with exit code 5|exit 137" "ok" >"$dir/script"
rm -f "$dir/calls"
rc=0
out=$(PATH="$dir/bin:$PATH" SLURM_JOB_ID=42 SLURM_JOB_NODELIST='n[1-3]' SLURM_RESTART_COUNT=1 SLURM_NTASKS=12 \
    timeout 60 "$TOOL" run --restarts=1 -N2 --ddp=verbose -K1 -n4 -- ./train 2>&1) || rc=$?
calls=$(cat "$dir/calls")
expect_eq "plugin report: exit 0 after the restart" "$rc" 0
expect_contains "plugin report: run 1 names rank 3 on n2, confirmed by srun" "$out" "run 1 of 2 on n[1-2] (SLURM_DDP_RESTARTS=1): failed, rank 3 on n2: exit status 5; restarting without n2 on n[1,3]"
expect_contains "plugin report: user's --ddp and -K only; with -n the task count stays" "$calls" "call 1 restarts=1 job=42 ntasks=12 args=--error=/dev/fd/N --nodes=2 --nodelist=n[1-2] --ddp=verbose -K1 -n4 ./train"
expect_contains "requeued job: the restart counts on from SLURM_RESTART_COUNT" "$calls" "call 2 restarts=2"
# Unconfirmed only: srun's own first line counts.
run "task slurmstepd-n2: error: slurm-ddp: rank 1 on n2 ended with exit status 9; ending the other ranks of step 42.0|say srun: error: n1: task 0: Exited with exit code 7|exit 7
ok" --restarts=1 -N1 -- ./train
expect_contains "unconfirmed report: srun's line counts" "$out" "run 1 of 2 on n1 (SLURM_DDP_RESTARTS=0): failed, rank 0 on n1: exit status 7; restarting without n1 on n2"

# The user chose where stderr goes (-e, -o, SLURM_STDERRMODE): srun gets no --error of ours, and
# its stderr is read as before, srun's lines and the plugin's report wherever they appear.
run "say srun: error: n1: task 0: Exited with exit code 7|exit 7
ok" --restarts=1 -N1 -e "$dir/err.txt" -- ./train
expect_contains "-e given: no --error added" "$calls" "call 1 restarts=0 job=42 ntasks=unset args=--ddp --kill-on-bad-exit=1 --nodes=1 --nodelist=n1 -e $dir/err.txt ./train"
expect_contains "-e given: srun's line still read" "$out" "run 1 of 2 on n1 (SLURM_DDP_RESTARTS=0): failed, rank 0 on n1: exit status 7; restarting without n1 on n2"
run "ok" -N1 --output=out.%t -- ./train
expect_not_contains "--output given: no --error added" "$calls" "/dev/fd/"
printf '%s\n' "ok" >"$dir/script"
rm -f "$dir/calls"
PATH="$dir/bin:$PATH" SLURM_JOB_ID=42 SLURM_JOB_NODELIST='n[1-3]' SLURM_STDERRMODE=err.txt \
    timeout 60 "$TOOL" run -N1 -- ./train >/dev/null 2>&1
expect_not_contains "SLURM_STDERRMODE set: no --error added" "$(cat "$dir/calls")" "/dev/fd/"

# No failed node named: no restart; srun's status.
run "say srun: error: Unable to create step for job 42: Requested node configuration is not available|exit 1
ok" --restarts=2 -N1 -- ./train
expect_eq "unnamed failure: srun's status" "$rc" 1
expect_eq "unnamed failure: one call" "$(grep -c '^call' <<<"$calls")" 1
expect_contains "unnamed failure: says why" "$out" "not restarting: no failed node to leave out"

# Signals: USR1 goes on to srun, TERM stops without a restart.
start_bg "sleep
ok" --restarts=2 -N1 -- ./train
for _ in $(seq 50); do [ -s "$dir/calls" ] && break; sleep 0.1; done
sleep 0.3
kill -USR1 "$pid"
# srun gets it once it has run a second (its tasks have then started: srun drops one before).
for _ in $(seq 50); do grep -q "srun got USR1" "$dir/calls" && break; sleep 0.1; done
kill -TERM "$pid"
finish_bg
expect_eq "SIGTERM: 128 + 15" "$rc" 143
expect_contains "SIGUSR1 reached srun" "$calls" "srun got USR1"
expect_contains "SIGTERM reached srun" "$calls" "srun got TERM"
expect_eq "SIGTERM: no restart" "$(grep -c '^call' <<<"$calls")" 1
expect_contains "SIGTERM: summary" "$out" "stopped by SIGTERM, not restarting"

# USR1 before srun can take it (srun has not set itself up yet): held until it can, not sent
# to a process it would end.
start_bg "late-usr1" -N1 -- ./train
wait_for_file "$dir/pid.1"
kill -USR1 "$pid"
finish_bg
expect_contains "early SIGUSR1: srun took it once it could" "$calls" "srun 1 got USR1"
expect_eq "early SIGUSR1: the run went on and succeeded" "$rc" 0

# USR1 between two runs: run 1's srun has ended (a process it left holds its stderr, so the
# window stays open until the test closes it); the signal goes to run 2's srun.
start_bg "say srun: error: n1: task 0: Exited with exit code 7|hold|exit 7
late-usr1" --restarts=1 -N1 -- ./train
if wait_reaped 1; then pass "between runs: run 1's srun ended"; else fail "between runs: run 1's srun did not end"; fi
kill -USR1 "$pid"
sleep 0.3
timeout 5 bash -c "echo go >\"\$1\"" _ "$dir/release"
finish_bg
expect_eq "between runs: two runs" "$(grep -c '^call' <<<"$calls")" 2
expect_contains "between runs: SIGUSR1 reached the next run's srun" "$calls" "srun 2 got USR1"
expect_eq "between runs: exit 0" "$rc" 0
expect_not_contains "between runs: nothing said lost" "$out" "not passed on"

# USR1 after the last run's srun ended: said on the summary line, not dropped silently.
start_bg "say srun: error: n1: task 0: Exited with exit code 7|hold|exit 7" -N1 -- ./train
wait_reaped 1
kill -USR1 "$pid"
sleep 0.3
timeout 5 bash -c "echo go >\"\$1\"" _ "$dir/release"
finish_bg
expect_eq "after the last run: its status" "$rc" 7
expect_contains "after the last run: the summary says SIGUSR1 was not passed on" "$out" \
    "run 1 of 1 on n1 (SLURM_DDP_RESTARTS=0): failed, rank 0 on n1: exit status 7; no restarts left (--restarts=0), exit status 7; SIGUSR1 not passed on: no srun was left to take it"

# srun missing.
rc=0
out=$(PATH=/nonexistent SLURM_JOB_ID=42 SLURM_JOB_NODELIST='n[1-3]' "$TOOL" run -N1 -- ./train 2>&1) || rc=$?
expect_eq "no srun: 127" "$rc" 127
expect_contains "no srun: says so" "$out" "cannot start srun"

if [ "$FAILURES" -ne 0 ]; then echo "$FAILURES check(s) failed"; exit 1; fi
echo "all checks passed"
