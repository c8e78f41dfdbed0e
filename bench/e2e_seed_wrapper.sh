#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Method (b) of bench/e2e_launch.sh: the hand-made wrapper many Slurm sites' templates ship,
# run by `srun -N<nodes> --ntasks-per-node=1 e2e_seed_wrapper.sh NPROC SCRIPT [ARGS...]`:
# one task per node, the first node of the job is the master, a hand-picked port, and the
# (deprecated) torch.distributed.launch starts NPROC workers on each node.
#
# torch 1.13 prints, from every node, a FutureWarning at start ("The module
# torch.distributed.launch is deprecated and will be removed in future. Use torchrun.", from
# torch/distributed/launch.py) and, with NPROC > 1, "Setting OMP_NUM_THREADS environment
# variable for each process to be 1 in default" (torch/distributed/run.py). Without --use_env
# it passes --local_rank=N to the script (e2e_rank.py drops it).
# --redirects 1 --tee 1: Debian's torch 1.13 on Python 3.11 fails at start without them
# ('NoneType' object has no attribute 'get'; see SLURM_NOTES); they only change how the
# workers' output is relayed.
set -eu  # no pipefail: `scontrol ... | head -1` may end scontrol with SIGPIPE
NPROC=$1
shift
PY=${E2E_PYTHON:-/usr/bin/python3}
MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -1)
MASTER_PORT=${E2E_SEED_PORT:-29500}
exec "$PY" -m torch.distributed.launch --nnodes="$SLURM_NNODES" --node_rank="$SLURM_NODEID" \
    --nproc_per_node="$NPROC" --master_addr="$MASTER_ADDR" --master_port="$MASTER_PORT" \
    --redirects 1 --tee 1 "$@"
