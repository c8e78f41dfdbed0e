#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# `srun --ddp slurm-ddp check` and `--ddp=check` on the real cluster, with faults injected: each
# fault must end in its own named error within the bound (10 s), and a healthy step must pass.
#
# Faults: rank 0's port held by another process; MASTER_ADDR that resolves nowhere; a node cut
# from the network (its veth down, as test_netns_cut.sh); two ranks forced onto one fake GPU.
# With PRIVATE_HOSTS=1 (tests/cluster/cluster.sh) n2 has its own /etc/hosts, so also: n2's own
# name resolving to 127.0.1.1, and MASTER_ADDR not resolving on n2 only.
source "$(dirname "$0")/lib.sh"
TOOL="$SDDP_BUILD_DIR/tools/slurm-ddp"
[ -x "$TOOL" ] || skip "slurm-ddp not built ($TOOL)"
[ "${SDDP_CLUSTER_NODES:-1}" -ge 2 ] || skip "needs 2 nodes"
BOUND=10
WORK=$(mktemp -d "$SDDP_WORK_ROOT/sddp-check.XXXXXX")
chmod 0777 "$WORK"
HOLDER_PID=
SRUN_PID=
VETH=sddp-v2
N2_HOSTS="$SDDP_CLUSTER_DIR/hosts/n2"
cleanup() {
    ip link set "$VETH" up 2>/dev/null || true
    [ -n "$HOLDER_PID" ] && kill "$HOLDER_PID" 2>/dev/null || true
    [ -n "$SRUN_PID" ] && kill "$SRUN_PID" 2>/dev/null || true
    [ -f "$WORK/hosts.n2.orig" ] && cat "$WORK/hosts.n2.orig" >"$N2_HOSTS"
    [ -f "$WORK/resolv.n2.orig" ] && cat "$WORK/resolv.n2.orig" >"$N2_HOSTS.resolv"
    rm -rf "$WORK"
    use_plugin
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# run_check NAME SRUN_ARGS... : runs `srun SRUN_ARGS`, sets OUT, RC and SECS.
run_check() {
    local name=$1 t0 t1
    shift
    # Each case on an idle cluster: a step the case before it had killed can still be completing
    # on one node, whose task then starts seconds after rank 0's and misses the check's 5 s.
    wait_for 20 queue_empty || echo "note: still in the queue: $(squeue -h -o '%i %j %T' | paste -sd';')"
    t0=$(date +%s.%N)
    RC=0
    OUT=$(timeout 60 srun "$@" 2>&1) || RC=$?
    t1=$(date +%s.%N)
    SECS=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
    echo "--- $name: rc=$RC, $SECS s ---"
    echo "$OUT"
}
within_bound() {
    if awk -v s="$SECS" -v b="$BOUND" 'BEGIN { exit !(s < b) }'; then
        pass "$1 within $BOUND s ($SECS s)"
    else
        fail "$1 took $SECS s (bound $BOUND s)"
    fi
}

# --- healthy step: table, verdict, exit 0, JSON --------------------------------------------
run_check healthy --ddp -N2 -n4 "$TOOL" check
expect_eq "healthy step exits 0" "$RC" 0
expect_contains "one-line verdict" "$OUT" "slurm-ddp check: OK: 4 ranks can rendezvous"
expect_eq "four table rows, all ok" "$(grep -cE '^[0-3] +n[12] .* ok$' <<<"$OUT")" 4
expect_contains "MASTER_ADDR resolved in the table" "$OUT" "n1 -> "
expect_not_contains "no problem line" "$OUT" "problem:"
within_bound "healthy check"

run_check json --ddp -N2 -n2 "$TOOL" check --json
expect_eq "--json exits 0" "$RC" 0
# The JSON document alone: srun's own notes ("job N queued and waiting for resources") share OUT.
got=$(grep '^{' <<<"$OUT" | /usr/bin/python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["healthy"], len(d["ranks"]), sorted({r["host"] for r in d["ranks"]}))' 2>&1) || true
expect_eq "--json: healthy, 2 ranks on n1 and n2" "$got" "True 2 ['n1', 'n2']"

run_check nccl --ddp -N2 -n2 "$TOOL" check --nccl
expect_eq "--nccl without GPUs exits 0" "$RC" 0
expect_contains "--nccl skipped cleanly" "$OUT" "nccl: skipped"

# --- rank 0's port held by another process ------------------------------------------------
PORT=29411
nsenter --net=/run/netns/sddp-n1 /usr/bin/python3 -c "
import socket, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('0.0.0.0', $PORT)); s.listen(8); time.sleep(60)" &
HOLDER_PID=$!
for _ in $(seq 50); do nsenter --net=/run/netns/sddp-n1 ss -Hltn "sport = :$PORT" | grep -q . && break; sleep 0.1; done
run_check port-held --ddp=port=$PORT -N2 -n2 "$TOOL" check
kill "$HOLDER_PID" 2>/dev/null || true
wait "$HOLDER_PID" 2>/dev/null || true
HOLDER_PID=
[ "$RC" != 0 ] && pass "port held: non-zero exit ($RC)" || fail "port held: exit 0"
# The plugin binds rank 0's port in task_init and refuses the step there, before any check runs.
expect_contains "port held: named" "$OUT" "MASTER_PORT=$PORT (option) cannot be used on rank 0's node: another process holds it"
expect_contains "port held: fix" "$OUT" "--ddp=port=N"
within_bound "port held"

# --- MASTER_ADDR that resolves nowhere ----------------------------------------------------
run_check no-such-master --ddp=addr=no-such-host.invalid -N2 -n2 "$TOOL" check
[ "$RC" != 0 ] && pass "unresolvable MASTER_ADDR: non-zero exit" || fail "unresolvable MASTER_ADDR: exit 0"
expect_contains "unresolvable MASTER_ADDR on n2 named" "$OUT" "node n2: MASTER_ADDR 'no-such-host.invalid' does not resolve"
within_bound "unresolvable MASTER_ADDR"

# --- two ranks forced onto one fake GPU ---------------------------------------------------
if [ "${SDDP_CLUSTER_GPUS_PER_NODE:-0}" -ge 1 ]; then
    run_check one-gpu --ddp=gpu-share -N1 -n2 --gres=gpu:1 "$TOOL" check
    [ "$RC" != 0 ] && pass "shared GPU: non-zero exit" || fail "shared GPU: exit 0"
    expect_contains "shared GPU named" "$OUT" "ranks 0 and 1 on n1: both use GPU"
    expect_contains "shared GPU: NCCL's error foretold" "$OUT" "Duplicate GPU detected"
    within_bound "shared GPU"
else
    echo "SKIP: shared-GPU case (cluster has no fake GPUs)"
fi

# --- --ddp=check: the program starts only after a passing check ---------------------------
run_check ddp-check-ok --ddp=check -N2 -n2 --export=ALL,SLURM_DDP_CHECK_TOOL="$TOOL" \
    /bin/sh -c 'echo started $RANK'
expect_eq "--ddp=check healthy: both programs start" "$(grep -c '^started [01]$' <<<"$OUT")" 2
# The program's own rendezvous takes the same port right after the check let it go.
if [ -x "$SDDP_BUILD_DIR/examples/c_minimal/c_minimal" ]; then
    run_check ddp-check-then-library --ddp=check -N2 -n2 --export=ALL,SLURM_DDP_CHECK_TOOL="$TOOL" \
        "$SDDP_BUILD_DIR/examples/c_minimal/c_minimal"
    expect_eq "--ddp=check, then the library on the same MASTER_PORT: exit 0" "$RC" 0
    expect_contains "--ddp=check, then the library: the world formed" "$OUT" "hosts: 0=n1 1=n2"
fi
# A fault only the check sees (the plugin's own port test is skipped when addr= names the host):
# MASTER_ADDR that resolves nowhere. The programs must not start.
run_check ddp-check-fail --ddp=check,addr=no-such-host.invalid -N2 -n2 \
    --export=ALL,SLURM_DDP_CHECK_TOOL="$TOOL" /bin/sh -c 'echo started $RANK'
[ "$RC" != 0 ] && pass "--ddp=check failing: srun fails" || fail "--ddp=check failing: srun exit 0"
expect_eq "--ddp=check failing: program never started" "$(grep -c '^started' <<<"$OUT")" 0
expect_contains "--ddp=check failing: reason on the task's stderr" "$OUT" "MASTER_ADDR 'no-such-host.invalid' does not resolve"
within_bound "--ddp=check failing"

# --- per-node name resolution (needs PRIVATE_HOSTS=1) -------------------------------------
if [ "${SDDP_CLUSTER_PRIVATE_HOSTS:-0}" = 1 ] && [ -f "$N2_HOSTS" ]; then
    cp "$N2_HOSTS" "$WORK/hosts.n2.orig"
    cp "$N2_HOSTS.resolv" "$WORK/resolv.n2.orig"
    # A resolver that answers at once (nothing listens on n2's 127.0.0.1:53), as a DNS server
    # that knows no such name does; this sandbox's own DNS server is unreachable from the nodes.
    echo "nameserver 127.0.0.1" >"$N2_HOSTS.resolv"
    # Debian's installer line: the node's own name on 127.0.1.1, ahead of the cluster's line.
    { echo "127.0.1.1 n2"; grep -vw n2 "$WORK/hosts.n2.orig"; } >"$N2_HOSTS"
    run_check own-name-loopback --ddp -N2 -n2 "$TOOL" check
    [ "$RC" != 0 ] && pass "n2 on 127.0.1.1: non-zero exit" || fail "n2 on 127.0.1.1: exit 0"
    expect_contains "n2 on 127.0.1.1 named" "$OUT" "node n2: its own name 'n2' resolves to 127.0.1.1 (loopback)"
    expect_eq "n2's row says FAIL, n1's ok" "$(grep -cE '^1 +n2 .* FAIL$|^0 +n1 .* ok$' <<<"$OUT")" 2
    within_bound "n2 on 127.0.1.1"

    # n1 unknown on n2 only.
    grep -vw n1 "$WORK/hosts.n2.orig" >"$N2_HOSTS"
    run_check master-unknown-on-n2 --ddp -N2 -n2 "$TOOL" check
    [ "$RC" != 0 ] && pass "MASTER_ADDR unknown on n2: non-zero exit" || fail "MASTER_ADDR unknown on n2: exit 0"
    expect_contains "MASTER_ADDR unknown on n2 named" "$OUT" "node n2: MASTER_ADDR 'n1' does not resolve"
    expect_not_contains "n1 resolves it" "$OUT" "node n1: MASTER_ADDR"
    within_bound "MASTER_ADDR unknown on n2"

    # The library itself (a C trainer, no check): rank 1 fails at once instead of waiting out its
    # timeout (rank 0 still waits for it, 8 s here). Timed to the message, read while srun runs.
    C="$SDDP_BUILD_DIR/examples/c_minimal/c_minimal"
    if [ -x "$C" ]; then
        t0=$(date +%s.%N)
        timeout 60 srun --ddp=timeout=8 -N2 -n2 "$C" >"$WORK/lib.out" 2>&1 &
        SRUN_PID=$!
        seen=
        for _ in $(seq 150); do
            if grep -q "does not resolve on host 'n2'" "$WORK/lib.out"; then seen=$(date +%s.%N); break; fi
            sleep 0.1
        done
        wait "$SRUN_PID" || true
        SRUN_PID=
        OUT=$(cat "$WORK/lib.out")
        echo "--- library-master-unknown ---"
        echo "$OUT"
        expect_contains "library: clear error on n2" "$OUT" "MASTER_ADDR 'n1' does not resolve on host 'n2'"
        if [ -n "$seen" ]; then
            SECS=$(awk -v a="$t0" -v b="$seen" 'BEGIN { printf "%.2f", b - a }')
            within_bound "library's error with MASTER_ADDR unknown on n2"
        else
            fail "library: no error from rank 1 within 15 s"
        fi
    fi
    cat "$WORK/hosts.n2.orig" >"$N2_HOSTS"
    cat "$WORK/resolv.n2.orig" >"$N2_HOSTS.resolv"
else
    echo "SKIP: per-node resolution cases (start the cluster with PRIVATE_HOSTS=1)"
fi

# --- --nccl and bus ids on the NCCL fakes (tests/api/fakes) -------------------------------
FAKES="$SDDP_BUILD_DIR/tests/api/fakes"
if [ "${SDDP_CLUSTER_GPUS_PER_NODE:-0}" -ge 1 ] && [ -f "$FAKES/libnccl.so.2" ]; then
    # fakes.sh TOOL ARGS: the tool on the fakes; RANK1_FAKE_NCCL and RANK1_CVD (set with env)
    # give rank 1 alone a fault or another CUDA_VISIBLE_DEVICES.
    cat >"$WORK/fakes.sh" <<TASK
#!/bin/bash
[ "\$SLURM_PROCID" = 1 ] && [ -n "\$RANK1_FAKE_NCCL" ] && export FAKE_NCCL=\$RANK1_FAKE_NCCL
[ "\$SLURM_PROCID" = 1 ] && [ -n "\$RANK1_CVD" ] && export CUDA_VISIBLE_DEVICES=\$RANK1_CVD
LD_LIBRARY_PATH=$FAKES exec "$TOOL" "\$@"
TASK
    chmod 0755 "$WORK/fakes.sh"
    run_check nccl-fakes --ddp -N2 -n2 --gres=gpu:1 "$WORK/fakes.sh" check --nccl
    expect_eq "--nccl on the fakes exits 0" "$RC" 0
    expect_contains "all-reduce on rank 0, with its bus id" "$OUT" \
        "nccl: rank 0 on n1 (GPU 0 0000:3b:00.0): all-reduce ok, sum 3 = 3"
    expect_contains "all-reduce on rank 1" "$OUT" "nccl: rank 1 on n2 (GPU 0 0000:3b:00.0): all-reduce ok"
    within_bound "--nccl on the fakes"

    run_check nccl-wrong --ddp -N2 -n2 --gres=gpu:1 \
        env RANK1_FAKE_NCCL=allreduce_wrong "$WORK/fakes.sh" check --nccl
    [ "$RC" != 0 ] && pass "wrong sum: non-zero exit" || fail "wrong sum: exit 0"
    expect_contains "wrong sum named on rank 1" "$OUT" \
        "problem: rank 1 on n2: the NCCL all-reduce failed: the all-reduce returned 2, not 3"
    within_bound "wrong sum"

    run_check nccl-hang --ddp -N2 -n2 --gres=gpu:1 \
        env RANK1_FAKE_NCCL=allreduce_hang "$WORK/fakes.sh" check --nccl --timeout=4
    [ "$RC" != 0 ] && pass "hung all-reduce: non-zero exit" || fail "hung all-reduce: exit 0"
    expect_contains "hung all-reduce named on rank 1" "$OUT" \
        "problem: rank 1 on n2: the NCCL all-reduce failed: the all-reduce was enqueued but did not complete within 2.0 s"
    within_bound "hung all-reduce"

    # One GPU named by index on rank 0 and by UUID on rank 1: only the bus ids show it is one.
    run_check bus-id --ddp=gpu-share -N1 -n2 --gres=gpu:1 \
        env RANK1_CVD=GPU-fake-0 "$WORK/fakes.sh" check
    [ "$RC" != 0 ] && pass "one GPU by index and UUID: non-zero exit" || fail "index and UUID: exit 0"
    expect_contains "one GPU by index and UUID named" "$OUT" \
        "problem: ranks 0 and 1 on n1: both use GPU GPU-fake-0 0000:3b:00.0"
    expect_contains "the table shows rank 1's bus id" "$OUT" "GPU-fake-0 0000:3b:00.0"
    within_bound "one GPU by index and UUID"
else
    echo "SKIP: --nccl on the fakes (no fake GPUs in the cluster or no NCCL fakes built)"
fi

# --- a node cut from the network: named, not waited for -----------------------------------
if [ "${SDDP_CLUSTER_MODE:-}" = netns ] && ip link show "$VETH" >/dev/null 2>&1; then
    cat >"$WORK/task.sh" <<'TASK'
#!/bin/bash
touch "$1/started.$SLURM_PROCID"
if [ "$SLURM_PROCID" = 1 ]; then
    for _ in $(seq 300); do [ -e "$1/cut" ] && break; sleep 0.1; done
fi
exec "$2" check
TASK
    chmod 0755 "$WORK/task.sh"
    timeout 90 srun --ddp -N2 -n2 --kill-on-bad-exit=0 "$WORK/task.sh" "$WORK" "$TOOL" \
        >"$WORK/out" 2>&1 &
    SRUN_PID=$!
    for _ in $(seq 300); do
        [ -e "$WORK/started.0" ] && [ -e "$WORK/started.1" ] && break
        sleep 0.1
    done
    if ! [ -e "$WORK/started.0" ] || ! [ -e "$WORK/started.1" ]; then
        fail "node cut: tasks did not start within 30 s"
        cat "$WORK/out"
        finish
    fi
    setsid bash -c "sleep 45; ip link set $VETH up" </dev/null >/dev/null 2>&1 &
    ip link set "$VETH" down
    t_cut=$(date +%s.%N)
    touch "$WORK/cut"
    reported=
    for _ in $(seq 200); do
        if grep -q "FAILED" "$WORK/out"; then reported=$(date +%s.%N); break; fi
        sleep 0.05
    done
    ip link set "$VETH" up
    wait "$SRUN_PID" || true
    SRUN_PID=
    OUT=$(cat "$WORK/out")
    echo "--- node cut ---"
    echo "$OUT"
    if [ -n "$reported" ]; then
        SECS=$(awk -v a="$t_cut" -v b="$reported" 'BEGIN { printf "%.2f", b - a }')
        within_bound "cut node reported"
    else
        fail "no verdict within 10 s of the cut"
    fi
    expect_contains "cut node named" "$OUT" "node n2: rank 1 did not join the rendezvous"
else
    echo "SKIP: node-cut case (cluster not in netns mode)"
fi
finish
