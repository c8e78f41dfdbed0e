#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# A real PyTorch DDP trainer (gloo, CPU) across 2 nodes under srun --ddp: init_process_group
# with env:// and no launcher, training, checkpoint, resume, identical weights on every rank.
source "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
"$PY" -c 'import torch.distributed' 2>/dev/null || skip "python3-torch is not installed for $PY"
TRAINER="$SDDP_SOURCE_DIR/examples/pytorch/train_ddp.py"
ckpt=$(mktemp -u /tmp/sddp-ckpt.XXXXXX.pt)
trap 'rm -f "$ckpt"; use_plugin' EXIT

out=$(SRUN_TIMEOUT=180 srun_t --ddp -N2 --ntasks-per-node=2 "$PY" "$TRAINER" --epochs 2 --checkpoint "$ckpt" 2>&1) \
    || fail "trainer failed: $out"
expect_contains "gloo backend initialised from env://" "$out" "backend gloo"
expect_contains "epoch 1 trained" "$out" "epoch 1 loss"
expect_contains "4 ranks hold identical weights" "$out" "OK: 4 ranks hold identical weights"
[ "$(grep -c 'epoch 0 loss' <<<"$out")" = 1 ] && pass "only rank 0 logs" || fail "loss logged more than once"
[ -f "$ckpt" ] && pass "rank 0 wrote the checkpoint" || fail "no checkpoint at $ckpt"

out=$(SRUN_TIMEOUT=180 srun_t --ddp -N2 -n3 "$PY" "$TRAINER" --epochs 3 --checkpoint "$ckpt" 2>&1) \
    || fail "resumed trainer failed: $out"
expect_contains "resumed at epoch 2" "$out" "at epoch 2"
expect_contains "uneven 3-rank world ok" "$out" "OK: 3 ranks hold identical weights"

# Without --ddp the same program refuses clearly instead of hanging.
out=$(srun_t -n1 "$PY" "$TRAINER" 2>&1) && fail "ran without --ddp" || \
    expect_contains "without --ddp: clear message" "$out" "RANK is not set"
finish
