#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The fake gres GPUs in pyxis containers under --ddp (pyxis listed first): every task gets inside
# the container the CUDA_VISIBLE_DEVICES and SLURM_DDP_DEVICE that the same step gets outside, for
# the step's GPUs per node (gpu-bind=local, single) and for GPUs Slurm binds per task
# (--gpus-per-task, --gpu-bind=map_gpu). enroot's extra/50-slurm-pmi.sh hook writes every SLURM_*
# variable of the node's first task into the container, and pyxis copies them into every task: a
# task's own SLURM_STEP_GPUS (which Slurm narrows per task) becomes the first task's, unless the
# step names it in --container-env; the binding must not depend on it.
source "$(dirname "$0")/container_lib.sh"
[ "${SDDP_CLUSTER_GPUS_PER_NODE:-0}" -ge 2 ] ||
    { fail "the cluster has no fake GPUs (GPUS_PER_NODE=${SDDP_CLUSTER_GPUS_PER_NODE:-0})"; finish; }
gpus() { grep '^vars ' <<<"$1" | sort -k2n | awk '{ $3 = ""; print }'; }

# same_inside WHAT SRUN_ARGS...: the step's GPU variables per task, inside a container as outside.
same_inside() {
    local what=$1 outside inside
    shift
    local step=(-N2 --ntasks-per-node=2 "$@" "$VARS" CUDA_VISIBLE_DEVICES SLURM_DDP_DEVICE LOCAL_RANK)
    outside=$(srun_t "${step[@]}" 2>&1) || fail_run "$what, no container" $? "$outside"
    inside=$(csrun "$IMAGE" "${step[@]}" 2>&1) || fail_run "$what, in a container" $? "$inside"
    outside=$(gpus "$outside") inside=$(gpus "$inside")
    if [ "$(wc -l <<<"$inside")" = 4 ] && ! grep -q 'CUDA_VISIBLE_DEVICES=unset' <<<"$inside" &&
        [ "$inside" = "$outside" ]; then
        pass "$what: each task's GPUs inside the container as outside ($(paste -sd';' <<<"$inside" | tr -s ' '))"
    else
        fail "$what: inside and outside differ:"
        echo "outside:"; echo "$outside"; echo "inside:"; echo "$inside"
    fi
}

use_pyxis first no-extra-hooks use_squashfuse=1
same_inside "standard hooks, --ddp --gpus-per-node=2" --ddp --gpus-per-node=2
same_inside "standard hooks, --ddp --gpus-per-task=1" --ddp --gpus-per-task=1
same_inside "standard hooks, --ddp --gpu-bind=map_gpu:1,0" --ddp --gres=gpu:2 --gpu-bind=map_gpu:1,0

use_pyxis first extra-hooks use_squashfuse=1
same_inside "extra hooks, --ddp --gpus-per-node=2" --ddp --gpus-per-node=2
same_inside "extra hooks, --ddp=gpu-bind=single --gpus-per-node=2" --ddp=gpu-bind=single --gpus-per-node=2
same_inside "extra hooks, --ddp --gpus-per-task=1 --container-env=SLURM_STEP_GPUS" --ddp --gpus-per-task=1 \
    --container-env=SLURM_STEP_GPUS
same_inside "extra hooks, --ddp --gpus-per-task=1" --ddp --gpus-per-task=1
finish
