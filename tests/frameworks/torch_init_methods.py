# SPDX-License-Identifier: Apache-2.0
"""A seed-style PyTorch script that names its rendezvous itself, as hand-made setups do:
init_method="tcp://MASTER_ADDR:MASTER_PORT" or "file:///a/shared/path", with rank and world size
passed explicitly (neither init method reads them from the environment). Under `srun --ddp` the
only line such a script needs is the one below that reads RANK, WORLD_SIZE and, for tcp://,
MASTER_ADDR and MASTER_PORT from the environment.

Usage: torch_init_methods.py tcp | file DIR
"""
import os
import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from stack_report import digest_torch, report, torch_store_endpoint


def main():
    mode = sys.argv[1]
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    if mode == "tcp":
        init = f"tcp://{os.environ['MASTER_ADDR']}:{os.environ['MASTER_PORT']}"
    else:
        # One file per step: a file left by an earlier step with the same name would be joined.
        init = f"file://{sys.argv[2]}/init.{os.environ['SLURM_JOB_ID']}.{os.environ['SLURM_STEP_ID']}"
    dist.init_process_group("gloo", init_method=init, rank=rank, world_size=world)
    torch.manual_seed(0)
    model = DDP(torch.nn.Linear(8, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    gen = torch.Generator().manual_seed(100 + rank)  # different data per rank: DDP must average
    for _ in range(5):
        loss = model(torch.randn(16, 8, generator=gen)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    if mode == "tcp":
        addr, port = torch_store_endpoint()
    else:
        addr, port = "file", init[len("file://"):]
    report("torch_" + mode, rank, world, addr, port, digest_torch(model.module))
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
