#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A seed-style image trainer with SyncBatchNorm, unchanged under `srun --ddp` on GPUs.

SyncBatchNorm averages batch statistics across every rank, so it needs NCCL and a GPU per rank
(PyTorch implements it on CUDA only):

    srun --ddp -N2 --ntasks-per-node=4 --gpus-per-node=4 python3 examples/pytorch/train_syncbn.py

It ends by checking that every rank holds identical weights and identical BatchNorm running
statistics (those are what SyncBatchNorm keeps in step), and prints one line
`syncbn ok world=N` from rank 0.
"""
import os
import sys

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    if not torch.cuda.is_available():
        print("syncbn: needs a GPU (SyncBatchNorm runs on CUDA only)", file=sys.stderr)
        return 2
    dist.init_process_group("nccl", init_method="env://")
    rank, world = dist.get_rank(), dist.get_world_size()
    # SLURM_DDP_DEVICE is the own GPU's index in CUDA_VISIBLE_DEVICES (LOCAL_RANK unless Slurm
    # confines each task to its GPU).
    device = torch.device("cuda", int(os.environ.get("SLURM_DDP_DEVICE", os.environ["LOCAL_RANK"])))
    torch.cuda.set_device(device)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                          nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 10))
    model = nn.SyncBatchNorm.convert_sync_batchnorm(model).to(device)
    model = DDP(model, device_ids=[device.index])
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    gen = torch.Generator().manual_seed(100 + rank)  # each rank its own data: stats must sync
    for _ in range(5):
        x = torch.randn(4, 3, 16, 16, generator=gen).to(device)
        y = torch.randint(0, 10, (4,), generator=gen).to(device)
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    state = torch.cat([t.detach().float().flatten() for t in model.module.state_dict().values()])
    gathered = [torch.zeros_like(state) for _ in range(world)]
    dist.all_gather(gathered, state)
    same = all(torch.equal(gathered[0], g) for g in gathered)
    if rank == 0:
        print(f"syncbn {'ok' if same else 'DIFFERENT'} world={world}", flush=True)
    dist.destroy_process_group()
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
