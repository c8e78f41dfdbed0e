#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The NCCL layer's choices on the real cluster, with recording fakes of libnccl.so.2 and
# libcudart (tests/api/fakes) standing in for the GPU: each task's device under plain srun
# --gpus-per-task=1 (no --ddp), under srun --ddp, and under plain --gres with more tasks than
# GPUs. The fakes "see" as many devices as CUDA_VISIBLE_DEVICES lists. Then faults on one rank
# (FAKE_NCCL set in that task only): its ncclCommInitRankConfig fails, so every rank must return
# promptly naming it; its ncclCommFinalize blocks, so its finalize must end at the timeout.
source "$(dirname "$0")/lib.sh"
PROBE="$SDDP_BUILD_DIR/tests/api/nccl_probe"
FAKES="$SDDP_BUILD_DIR/tests/api/fakes"
[ -x "$PROBE" ] || skip "nccl_probe not built"
[ -f "$FAKES/libnccl.so.2" ] || skip "no NCCL fakes in this build (nccl.h not found at build time)"
# Plain srun (no --ddp) carries no step secret: those launches opt in to the unauthenticated
# rendezvous, as a site without the plugin would (the test network is the cluster's own).
probe() {  # probe SRUN_ARGS...: every task runs sddp_init with NCCL on the fakes
    srun_t "$@" bash -c 'FAKE_CUDA_DEVICES=$(awk -F, "{print NF}" <<<"${CUDA_VISIBLE_DEVICES:-}")
        [ -n "${SLURM_DDP_SECRET:-}" ] || export SLURM_DDP_ALLOW_UNAUTHENTICATED=1
        LD_LIBRARY_PATH='"$FAKES"' FAKE_CUDA_DEVICES=$FAKE_CUDA_DEVICES exec '"$PROBE"' init' 2>&1 || true
}

# Plain srun, one GPU per task: every task's only visible GPU is device 0 (LOCAL_RANK would be
# an invalid ordinal for local ranks >= 1).
no_plugin
out=$(probe -N2 --ntasks-per-node=2 --gpus-per-task=1)
n_ok=$(grep -c '^init=SDDP_OK' <<<"$out")
n_dev0=$(grep -c '^rank [0-3] of 4 on n[12]: device 0$' <<<"$out")
if [ "$n_ok" = 4 ] && [ "$n_dev0" = 4 ]; then
    pass "plain srun --gpus-per-task=1: 4 ranks, each on its one GPU (device 0)"
else
    fail "plain srun --gpus-per-task=1 ($n_ok ok, $n_dev0 on device 0):"; echo "$out"
fi

# Plain srun --gres=gpu:2 with 2 tasks per node: device LOCAL_RANK of the two.
out=$(probe -N2 --ntasks-per-node=2 --gres=gpu:2)
if [ "$(grep -c '^init=SDDP_OK' <<<"$out")" = 4 ] &&
   [ "$(grep -Ec '^rank [02] of 4 on n[12]: device 0$' <<<"$out")" = 2 ] &&
   [ "$(grep -Ec '^rank [13] of 4 on n[12]: device 1$' <<<"$out")" = 2 ]; then
    pass "plain srun --gres=gpu:2: device LOCAL_RANK"
else
    fail "plain srun --gres=gpu:2:"; echo "$out"
fi

# More tasks than GPUs on a node: refused before NCCL, naming the counts.
# (nccl_probe exits 0 and prints sddp_init's status.)
out=$(probe -N1 -n3 --gres=gpu:2)
if [ "$(grep -c '^init=SDDP_ERR_CUDA' <<<"$out")" = 3 ] && ! grep -q '^init=SDDP_OK' <<<"$out"; then
    pass "3 tasks on 2 GPUs: every rank refused (SDDP_ERR_CUDA)"
else
    fail "3 tasks on 2 GPUs:"; echo "$out"
fi
expect_contains "3 tasks on 2 GPUs: refused with the counts" "$out" "only 2 GPU(s)"
use_plugin

# srun --ddp: SLURM_DDP_DEVICE from the plugin.
out=$(probe --ddp -N2 --ntasks-per-node=2 --gres=gpu:2)
if [ "$(grep -c '^init=SDDP_OK' <<<"$out")" = 4 ] && [ "$(grep -c '^finalize=SDDP_OK' <<<"$out")" = 4 ]; then
    pass "srun --ddp --gres=gpu:2: 4 ranks through init and finalize on the fakes"
else
    fail "srun --ddp:"; echo "$out"
fi

# probe_faulty WORDS SRUN_ARGS...: like probe, with FAKE_NCCL=WORDS in rank 1's task only.
probe_faulty() {
    local words=$1
    shift
    srun_t "$@" bash -c '[ "$SLURM_PROCID" = 1 ] && export FAKE_NCCL='"$words"'
        LD_LIBRARY_PATH='"$FAKES"' exec '"$PROBE"' init' 2>&1 || true
}

# Rank 1's init fails at once: both ranks return the same error naming rank 1 and n2, long
# before the 10 s timeout (rank 0's own init would otherwise be waited out).
t0=$SECONDS
out=$(probe_faulty init_fail --ddp -N2 --ntasks-per-node=1 --gres=gpu:1)
took=$((SECONDS - t0))
if [ "$(grep -c '^init=SDDP_ERR_NCCL: .*NCCL init failed on rank 1 (host n2): ncclCommInitRankConfig' <<<"$out")" = 2 ] &&
   [ "$took" -lt 8 ]; then
    pass "rank 1's init fails: both ranks name rank 1 on n2 (${took} s)"
else
    fail "rank 1's init fails (${took} s):"; echo "$out"
fi

# Rank 1's blocking ncclCommFinalize never returns: its finalize is aborted at the timeout.
t0=$SECONDS
out=$(probe_faulty finalize_block --ddp -N2 --ntasks-per-node=1 --gres=gpu:1)
took=$((SECONDS - t0))
if grep -q '^finalize=SDDP_ERR_TIMEOUT: .*ncclCommFinalize did not return' <<<"$out" &&
   [ "$(grep -c '^finalize=SDDP_OK' <<<"$out")" = 1 ] && [ "$took" -lt 25 ]; then
    pass "rank 1's finalize blocks: aborted at the timeout (${took} s, timeout 10 s)"
else
    fail "rank 1's finalize blocks (${took} s):"; echo "$out"
fi
finish
