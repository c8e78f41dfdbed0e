#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Method (d) of bench/e2e/e2e_launch.sh: Lightning's own Slurm path, no plugin.

    srun -N2 --ntasks-per-node=K python e2e_lightning_rank.py

Lightning (Fabric, the layer under Trainer) detects Slurm by itself (SLURMEnvironment: rank from
SLURM_PROCID, world from SLURM_NTASKS, MASTER_ADDR from the job's node list, MASTER_PORT 15000 +
the job id's last four digits) and initialises gloo; then one all-reduce. Prints the same line
as e2e_rank.py; "imported" includes importing Lightning, which such a program does anyway.
"""
import time

START = time.time()
import os  # noqa: E402
import sys  # noqa: E402

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from lightning_fabric import Fabric  # noqa: E402

IMPORTED = time.time()


def main():
    per_node = int(os.environ["SLURM_NTASKS_PER_NODE"].split("(")[0])
    nodes = int(os.environ["SLURM_NNODES"])
    fabric = Fabric(accelerator="cpu", strategy="ddp", devices=per_node, num_nodes=nodes)
    fabric.launch()
    init = time.time()
    t = torch.ones(1)
    dist.all_reduce(t)
    done = time.time()
    env = type(fabric.strategy.cluster_environment).__name__
    print(f"E2E rank={dist.get_rank()} world={dist.get_world_size()} sum={int(t.item())} "
          f"start={START:.6f} imported={IMPORTED:.6f} init={init:.6f} done={done:.6f} env={env}",
          flush=True)
    dist.barrier()
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
