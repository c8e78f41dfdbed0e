#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Method (b) of bench/e2e/e2e_launch.sh: the hand-made wrapper many Slurm sites' templates ship,
# run by `srun -N<nodes> --ntasks-per-node=1 e2e_seed_wrapper.sh NPROC SCRIPT [ARGS...]`:
# one task per node, the first node of the job (scontrol show hostnames) is the master, a
# hand-picked port, and torchrun with its static rendezvous starts NPROC workers on each node.
#
# E2E_TORCHRUN is the torchrun to use (bench/e2e/e2e_launch.sh: the pinned torch 2.15 environment's);
# E2E_TORCHRUN_ARGS extra arguments (for Debian's torch 1.13 on Python 3.11: "--redirects 1
# --tee 1", without which it fails at start, see SLURM_NOTES). With NPROC > 1 torchrun prints
# "Setting OMP_NUM_THREADS environment variable for each process to be 1 in default".
set -eu  # no pipefail: `scontrol ... | head -1` may end scontrol with SIGPIPE
NPROC=$1
shift
TORCHRUN=${E2E_TORCHRUN:-torchrun}
MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -1)
MASTER_PORT=${E2E_SEED_PORT:-29500}
# shellcheck disable=SC2086 # E2E_TORCHRUN_ARGS is a list of arguments
exec "$TORCHRUN" --nnodes="$SLURM_NNODES" --node_rank="$SLURM_NODEID" \
    --nproc_per_node="$NPROC" --master_addr="$MASTER_ADDR" --master_port="$MASTER_PORT" \
    ${E2E_TORCHRUN_ARGS:-} "$@"
