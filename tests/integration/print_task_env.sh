#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Print one line per task with the variables --ddp sets, next to Slurm's own, for assertions:
# task PROCID RANK LOCAL_RANK WORLD_SIZE LOCAL_WORLD_SIZE NODE_RANK GROUP_RANK GROUP_WORLD_SIZE
#      NNODES MASTER_ADDR MASTER_PORT HOST LOCALID SECRET_LEN CUDA_VISIBLE_DEVICES
u() { echo "${!1:-unset}"; }
secret=${SLURM_DDP_SECRET:-}
echo "task $(u SLURM_PROCID) $(u RANK) $(u LOCAL_RANK) $(u WORLD_SIZE) $(u LOCAL_WORLD_SIZE)" \
     "$(u NODE_RANK) $(u GROUP_RANK) $(u GROUP_WORLD_SIZE) $(u NNODES) $(u MASTER_ADDR)" \
     "$(u MASTER_PORT) $(hostname) $(u SLURM_LOCALID) ${#secret} $(u CUDA_VISIBLE_DEVICES)"
