# SPDX-License-Identifier: Apache-2.0
"""Plain PyTorch DDP on gloo with init_method="env://", run as a user would run it: directly
under `srun --ddp` (one task per rank) or as torchrun's worker under `srun --ddp=launcher`.

Under torchrun the worker's MASTER_ADDR/MASTER_PORT are torchrun's; the step's values reached
the launcher as PET_MASTER_ADDR/PET_MASTER_PORT, so those are what the store must sit on.
"""
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from stack_report import digest_torch, report, torch_store_endpoint


def main():
    dist.init_process_group("gloo", init_method="env://")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    model = DDP(torch.nn.Linear(8, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    gen = torch.Generator().manual_seed(100 + rank)  # different data per rank: DDP must average
    for _ in range(5):
        x = torch.randn(16, 8, generator=gen)
        loss = model(x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    addr, port = torch_store_endpoint()
    extra = {"local_rank": os.environ.get("LOCAL_RANK", "-")}
    if dist.is_torchelastic_launched():
        # What the plugin gave the launcher; the worker's own MASTER_* are torchrun's.
        extra.update(launcher="torchrun", env_addr=os.environ.get("PET_MASTER_ADDR", "-"),
                     env_port=os.environ.get("PET_MASTER_PORT", "-"),
                     worker_port=os.environ.get("MASTER_PORT", "-"))
    else:
        extra["launcher"] = "srun"
    report("torch_ddp", rank, world, addr, port, digest_torch(model.module), **extra)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
