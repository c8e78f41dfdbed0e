#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Method (c) of bench/e2e/e2e_launch.sh: torchrun with the c10d rendezvous, as PyTorch's own Slurm
# instructions have it, run by `srun -N<nodes> --ntasks-per-node=1 e2e_torchrun.sh NPROC
# SCRIPT [ARGS...]`: one torchrun (the elastic agent) per node, the first node of the job as
# the rendezvous endpoint on a hand-picked port, the job id as the rendezvous id.
#
# torch 1.13 spells the flags with underscores (--nproc_per_node, --rdzv_backend,
# --rdzv_endpoint); torch >= 2.0 also takes --nproc-per-node, --rdzv-backend, --rdzv-endpoint.
# With NPROC > 1 it prints "Setting OMP_NUM_THREADS environment variable for each process to be
# 1 in default" from every node (torch/distributed/run.py); no deprecation warning.
# E2E_TORCHRUN_ARGS: extra arguments ("--redirects 1 --tee 1" for Debian's torch 1.13 on
# Python 3.11, see e2e_seed_wrapper.sh).
set -eu  # no pipefail: `scontrol ... | head -1` may end scontrol with SIGPIPE
NPROC=$1
shift
TORCHRUN=${E2E_TORCHRUN:-torchrun}
head_node=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -1)
# shellcheck disable=SC2086 # E2E_TORCHRUN_ARGS is a list of arguments
exec "$TORCHRUN" --nnodes="$SLURM_NNODES" --nproc_per_node="$NPROC" --rdzv_backend=c10d \
    --rdzv_endpoint="$head_node:${E2E_RDZV_PORT:-29400}" --rdzv_id="$SLURM_JOB_ID" \
    ${E2E_TORCHRUN_ARGS:-} "$@"
