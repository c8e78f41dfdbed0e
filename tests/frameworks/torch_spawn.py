# SPDX-License-Identifier: Apache-2.0
"""The classic torch.multiprocessing.spawn trainer: one task per node (`srun --ddp=launcher`),
one process per device, rank = node rank x processes per node + index. The topology, address
and port come from the launcher variables the plugin sets, never from constants in the script.
"""
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP

from stack_report import digest_torch, report, torch_store_endpoint


def worker(index, nproc, node_rank, nnodes, addr, port):
    rank = node_rank * nproc + index
    world = nnodes * nproc
    dist.init_process_group("gloo", init_method=f"tcp://{addr}:{port}", rank=rank, world_size=world)
    torch.manual_seed(0)
    model = DDP(torch.nn.Linear(8, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    gen = torch.Generator().manual_seed(100 + rank)
    for _ in range(5):
        loss = model(torch.randn(16, 8, generator=gen)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    store_addr, store_port = torch_store_endpoint()
    report("torch_spawn", rank, world, store_addr, store_port, digest_torch(model.module),
           env_addr=addr, env_port=port, index=index, node_rank=node_rank)
    dist.barrier()
    dist.destroy_process_group()


def main():
    nproc = int(os.environ["PET_NPROC_PER_NODE"])
    args = (nproc, int(os.environ["PET_NODE_RANK"]), int(os.environ["PET_NNODES"]),
            os.environ["PET_MASTER_ADDR"], int(os.environ["PET_MASTER_PORT"]))
    mp.spawn(worker, args=args, nprocs=nproc, join=True)


if __name__ == "__main__":
    main()
