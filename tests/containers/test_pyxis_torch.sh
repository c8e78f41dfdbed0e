#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# PyTorch DDP in pyxis containers under `srun --ddp`, pyxis listed before slurm-ddp as
# docs/admin.md asks: every rank sees the step's variables, not the image's (MASTER_ADDR=localhost,
# MASTER_PORT=29500), not those of enroot's 50-slurm-pytorch.sh hook (the step's first host,
# 61000 + job id % 4536) nor another task's (pyxis copies one container environment into every
# task), and a gloo DDP step trains to identical weights, meeting on the step's port. With enroot's
# extra hooks on and off, and in both of pyxis's ways to start an image (enroot create, its
# default, and use_squashfuse=1).
source "$(dirname "$0")/container_lib.sh"
PY=/usr/bin/python3  # the image's, with the image's torch

# Without --ddp, what the checks below must not find: the image's values, or the hook's.
use_pyxis first extra-hooks use_squashfuse=1
out=$(csrun "$IMAGE_MASTER" -N2 --ntasks-per-node=2 "$VARS" $DDP_VARS 2>&1) ||
    fail_run "no --ddp, image with MASTER_ADDR/MASTER_PORT" $? "$out"
expect_eq "without --ddp: the image's MASTER_ADDR:MASTER_PORT on every rank" \
    "$(grep -c ' MASTER_ADDR=localhost MASTER_PORT=29500 ' <<<"$out")" 4
out=$(csrun "$IMAGE" -N2 --ntasks-per-node=2 "$VARS" $DDP_VARS SLURM_JOB_ID 2>&1) ||
    fail_run "no --ddp, image with PYTORCH_VERSION only" $? "$out"
job=$(var_of SLURM_JOB_ID 0 "$out")
expect_eq "without --ddp: enroot's hook's MASTER_ADDR:MASTER_PORT on every rank" \
    "$(grep -c " MASTER_ADDR=n1 MASTER_PORT=$((61000 + ${job:-0} % 4536)) " <<<"$out")" 4

# Each image under two setups: enroot's extra hooks with pyxis starting the squashfs directly,
# and pyxis's defaults (`enroot create` per step) with enroot's standard hooks only.
for setup in "extra-hooks use_squashfuse=1" "no-extra-hooks"; do
    # shellcheck disable=SC2086 # the setup is a list of arguments
    use_pyxis first $setup
    name="pyxis first, $setup"
    for image in "$IMAGE" "$IMAGE_MASTER"; do
        what="$name, ${image##*/}"
        out=$(csrun "$image" --ddp -N2 --ntasks-per-node=2 "$VARS" $DDP_VARS 2>&1) ||
            fail_run "$what: srun --ddp" $? "$out"
        check_vars "$what" "$out" 4 n1
    done
    out=$(csrun "$IMAGE_MASTER" --ddp -N2 --ntasks-per-node=2 "$PY" "$FW_DIR/torch_ddp.py" 2>&1) ||
        fail_run "$name: torch_ddp.py" $? "$out"
    check_stack "$name: srun --ddp python torch_ddp.py in the image (env://, gloo, torch 1.13)" "$out" 4
done

# pyxis also copies SLURM_PROCID into RANK per task (images with PYTORCH_VERSION): where --ddp
# numbers ranks otherwise, its RANK must win. -m cyclic puts tasks 0 2 on n1 and 1 3 on n2, which
# rank-order=node numbers 0 1 and 2 3.
ranks() { for t in 0 1 2 3; do var_of RANK "$t" "$1"; done | paste -sd' '; }
order=(--ddp=rank-order=node -N2 --ntasks-per-node=2 -m cyclic "$VARS" RANK)
outside=$(srun_t "${order[@]}" 2>&1) || fail_run "rank-order=node without a container" $? "$outside"
out=$(csrun "$IMAGE" "${order[@]}" 2>&1) || fail_run "rank-order=node in a container" $? "$out"
expect_eq "rank-order=node -m cyclic, outside a container" "$(ranks "$outside")" "0 2 1 3"
expect_eq "rank-order=node -m cyclic, in a container: the plugin's RANK, not pyxis's SLURM_PROCID" \
    "$(ranks "$out")" "0 2 1 3"
finish
