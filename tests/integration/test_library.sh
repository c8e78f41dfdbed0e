#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# libbootstrap on the real cluster: the C example's identity + rendezvous across 2 nodes under
# srun --ddp (TCP, authenticated), srun --ddp --mpi=pmi2|pmix (PMI2, PMIx: no port), plain srun without the
# plugin (Slurm's variables), a rank that never arrives, and the NCCL trainer without a GPU.
source "$(dirname "$0")/lib.sh"
C="$SDDP_BUILD_DIR/examples/c_minimal/c_minimal"
CPP="$SDDP_BUILD_DIR/examples/cpp_allreduce/cpp_allreduce"
[ -x "$C" ] || skip "examples not built ($C); configure with -DSDDP_BUILD_EXAMPLES=ON"

expect_world() {  # expect_world WHAT OUTPUT IDENTITY TRANSPORT
    local hosts
    hosts=$(grep '^hosts:' <<<"$2" || true)
    if [ "$(grep -c "^rank [0-3] of 4 on n[12]: .*(identity: $3, transport: $4)" <<<"$2")" = 4 ] &&
       [ "$hosts" = "hosts: 0=n1 1=n1 2=n1 3=n2" ]; then
        pass "$1"
    else
        fail "$1:"; echo "$2"
    fi
}

out=$(srun_t --ddp -N2 -n4 "$C" 2>&1)
expect_world "srun --ddp: identity from the plugin, authenticated TCP" "$out" ddp tcp
expect_not_contains "srun --ddp: no unauthenticated warning" "$out" "unauthenticated"

# Under --mpi=pmi2|pmix the step offers both ways to meet: auto takes TCP, the faster; the
# key-value transports are exercised by asking for them.
out=$(srun_t --ddp --mpi=pmix -N2 -n4 "$C" 2>&1)
expect_world "srun --ddp --mpi=pmix: auto picks TCP, the faster way the step offers" "$out" ddp tcp

out=$(SLURM_DDP_TRANSPORT=pmi2 srun_t --ddp --mpi=pmi2 -N2 -n4 "$C" 2>&1)
expect_world "srun --ddp --mpi=pmi2: PMI2 key-value exchange" "$out" ddp pmi2

out=$(SLURM_DDP_TRANSPORT=pmix srun_t --ddp --mpi=pmix -N2 -n4 "$C" 2>&1)
expect_world "srun --ddp --mpi=pmix: PMIx key-value exchange, TCP's host list" "$out" ddp pmix
out=$(SLURM_DDP_TRANSPORT=pmix srun_t --ddp -N2 -n2 "$C" 2>&1) && fail "transport=pmix without --mpi=pmix ran"
expect_contains "transport=pmix without a PMIx server: clear error" "$out" "srun --mpi=pmix"

no_plugin
out=$(export SLURM_DDP_ALLOW_UNAUTHENTICATED=1; srun_t -N2 -n4 "$C" 2>&1)
expect_world "no plugin, opted in: Slurm's own variables, TCP" "$out" slurm tcp
expect_contains "no plugin, opted in: warns that TCP is unauthenticated" "$out" "unauthenticated"
out=$(srun_t -N2 -n4 "$C" 2>&1) && fail "no plugin, no secret, no opt-in: step succeeded"
expect_contains "no plugin, no secret: refused naming the variable" "$out" "SLURM_DDP_SECRET is not set"
use_plugin

# A rank that never arrives: the others fail within the timeout, naming it.
t=$SECONDS
out=$(srun_t --ddp=timeout=4 -N2 -n4 --kill-on-bad-exit=0 bash -c \
    'if [ "$SLURM_PROCID" = 3 ]; then exit 0; fi; exec '"$C" 2>&1) && fail "missing rank: step succeeded"
expect_contains "missing rank: error names rank 3" "$out" "missing ranks 3"
[ $((SECONDS - t)) -lt 20 ] && pass "missing rank: ended in $((SECONDS - t)) s" || fail "missing rank took $((SECONDS - t)) s"

# The NCCL trainer on a machine without GPUs: a clear CUDA error on every rank, not a hang.
if [ -x "$CPP" ] && ! ls /dev/nvidia[0-9]* >/dev/null 2>&1; then
    out=$(srun_t --ddp -N2 -n2 "$CPP" 2>&1) && fail "cpp_allreduce succeeded without a GPU"
    expect_contains "cpp_allreduce without GPU: clear error" "$out" "GPU selection"
fi
finish
