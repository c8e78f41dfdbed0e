#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# A network partition in the middle of a --ddp rendezvous: node n2 loses its link after both
# tasks have started but before rank 1 joins. Rank 0 (on n1) must give up within the --ddp
# timeout with an error naming the missing rank, never hang; once the link is back, srun must
# collect both tasks and end with a failure.
#
# The cut is `ip link set sddp-v2 down` in the root namespace: the bridge side of n2's veth
# (tests/cluster/cluster.sh: node K lives in netns sddp-nK, its veth sddp-vK is a port of
# sddp-br0). srun talks to n2's slurmd over the same link, so the cut happens only after the
# tasks are running (each task drops a marker file first; rank 1 waits for a "cut" marker
# before joining), and the link is restored as soon as rank 0 has reported, and ALWAYS on exit.
source "$(dirname "$0")/lib.sh"
C="$SDDP_BUILD_DIR/examples/c_minimal/c_minimal"
[ -x "$C" ] || skip "examples not built ($C); configure with -DSDDP_BUILD_EXAMPLES=ON"
[ "${SDDP_CLUSTER_MODE:-}" = netns ] || skip "cluster not in netns mode (MODE=${SDDP_CLUSTER_MODE:-?})"
[ "$(id -u)" = 0 ] || skip "needs root for ip link"
VETH=sddp-v2
ip link show "$VETH" >/dev/null 2>&1 || skip "no veth $VETH (is n2 a network namespace?)"

TIMEOUT=6
WORK=$(mktemp -d /tmp/sddp-netns-cut.XXXXXX)
chmod 0777 "$WORK"
SRUN_PID=
restore() {
    ip link set "$VETH" up 2>/dev/null || true
    if [ -n "$SRUN_PID" ] && kill -0 "$SRUN_PID" 2>/dev/null; then
        kill "$SRUN_PID" 2>/dev/null || true
        sleep 1
        kill -9 "$SRUN_PID" 2>/dev/null || true
    fi
    rm -rf "$WORK"
}
trap 'restore; use_plugin' EXIT
trap 'exit 1' INT TERM

# Task wrapper: announce, rank 1 waits for the cut, then the C example joins the rendezvous.
cat >"$WORK/task.sh" <<'TASK'
#!/bin/bash
touch "$1/started.$SLURM_PROCID"
if [ "$SLURM_PROCID" = 1 ]; then
    for _ in $(seq 300); do [ -e "$1/cut" ] && break; sleep 0.1; done
fi
exec "$2"
TASK
chmod 0755 "$WORK/task.sh"

t0=$SECONDS
# keep-going: this test is about the library's own detection on both sides of the cut, so fail
# fast must not end rank 1 when rank 0 gives up.
timeout 90 srun --ddp=timeout=$TIMEOUT,keep-going -N2 -n2 --kill-on-bad-exit=0 \
    "$WORK/task.sh" "$WORK" "$C" >"$WORK/out" 2>&1 &
SRUN_PID=$!

# Both tasks running (their markers are on the shared /tmp), then cut n2 off.
for _ in $(seq 300); do
    [ -e "$WORK/started.0" ] && [ -e "$WORK/started.1" ] && break
    sleep 0.1
done
if ! [ -e "$WORK/started.0" ] || ! [ -e "$WORK/started.1" ]; then
    fail "tasks did not start within 30 s"; cat "$WORK/out"; finish
fi
# Watchdog in its own session: even if this script is killed (ctest timeout sends SIGKILL, no
# trap runs), the link comes back within 45 s.
setsid bash -c "sleep 45; ip link set $VETH up" </dev/null >/dev/null 2>&1 &
ip link set "$VETH" down
t_cut=$SECONDS
touch "$WORK/cut"
pass "link of n2 cut $((t_cut - t0)) s after launch, both tasks running"

# Rank 0 reports the missing rank within the timeout (its clock started before the cut).
reported=
for _ in $(seq $(( (TIMEOUT + 15) * 10 ))); do
    if grep -q "missing ranks" "$WORK/out"; then reported=$SECONDS; break; fi
    kill -0 "$SRUN_PID" 2>/dev/null || break
    sleep 0.1
done
ip link set "$VETH" up
t_restore=$SECONDS
if [ -n "$reported" ]; then
    pass "rank 0 reported $((reported - t_cut)) s after the cut"
    [ $((reported - t0)) -le $((TIMEOUT + 10)) ] && pass "reported within the timeout ($TIMEOUT s + launch)" ||
        fail "reported $((reported - t0)) s after launch, timeout is $TIMEOUT s"
else
    fail "rank 0 did not report a missing rank within $((TIMEOUT + 15)) s of the cut"
fi

# With the link back, srun collects both tasks and fails; bounded.
rc=0
wait "$SRUN_PID" || rc=$?
SRUN_PID=
t_end=$SECONDS
out=$(cat "$WORK/out")
echo "--- srun output (rc=$rc, $((t_end - t0)) s, link restored after $((t_restore - t_cut)) s) ---"
echo "$out"
echo "---"
[ "$rc" = 124 ] && fail "srun hung (killed by timeout 90)"
[ "$rc" != 0 ] && pass "srun failed (rc=$rc)" || fail "srun succeeded across a partition"
expect_contains "rank 0 names the missing rank 1" "$out" "missing ranks 1"
# Rank 1 never reached rank 0: it must fail too (its error arrives once the link is back).
n_err=$(grep -c "srun: error: n2: task 1: Exited with exit code\|task 1: Exited" <<<"$out" || true)
[ "$n_err" -ge 1 ] && pass "rank 1 exited with an error" || fail "no exit status for rank 1"
expect_not_contains "no rank completed the world" "$out" "hosts: 0="
ip -br link show "$VETH" | grep -q "UP" && pass "link restored" || fail "link $VETH not up"
# The cluster is usable afterwards: a quick step on both nodes.
out2=$(srun_t -N2 -n2 hostname 2>&1 | grep -v '^srun: ' | sort | tr '\n' ' ')
expect_eq "cluster usable after the cut" "$out2" "n1 n2 "
finish
