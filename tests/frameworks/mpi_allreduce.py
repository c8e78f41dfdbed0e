# SPDX-License-Identifier: Apache-2.0
"""mpi4py under `srun --mpi=pmix --ddp`: MPI and torch.distributed side by side in one step.

MPI wires itself up through Slurm's PMIx; the torch process group through the MASTER_ADDR /
MASTER_PORT that --ddp exported. A program that mixes them (e.g. DeepSpeed's MPI discovery, or
MPI for data and gloo/NCCL for gradients) needs RANK to be the MPI rank, which is what this checks.
"""
import os

import numpy as np
from mpi4py import MPI

import torch
import torch.distributed as dist

from stack_report import digest_arrays, report, torch_store_endpoint


def main():
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()

    mine = np.arange(4, dtype=np.float64) + rank
    total = np.empty_like(mine)
    comm.Allreduce(mine, total, op=MPI.SUM)
    expected = size * np.arange(4, dtype=np.float64) + size * (size - 1) / 2

    # env:// reads RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT from --ddp.
    dist.init_process_group("gloo")
    t = torch.tensor([float(rank + 1)])
    dist.all_reduce(t)
    addr, port = torch_store_endpoint()

    report(
        "mpi4py",
        rank,
        size,
        addr,
        port,
        digest_arrays([total]),
        mpi_ok="yes" if np.array_equal(total, expected) else "no",
        env_rank=os.environ.get("RANK", "-"),
        env_world=os.environ.get("WORLD_SIZE", "-"),
        torch_rank=dist.get_rank(),
        torch_sum=int(t.item()),
        mpi_lib=MPI.Get_library_version().split(",")[0].replace(" ", "_"),
    )
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
