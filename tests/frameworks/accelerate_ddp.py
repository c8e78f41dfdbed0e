# SPDX-License-Identifier: Apache-2.0
"""A script using Accelerate 1.15's `Accelerator()`: run directly under `srun --ddp` (Accelerate
reads RANK/WORLD_SIZE/LOCAL_RANK/MASTER_*), or as a worker of `accelerate launch` per node under
`srun --ddp=launcher` (then torchrun, inside accelerate launch, starts it).
"""
import os

import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset

from stack_report import digest_torch, report, torch_store_endpoint


def main():
    acc = Accelerator(cpu=True)
    torch.manual_seed(0)
    model = torch.nn.Linear(8, 4)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    data = TensorDataset(torch.randn(64, 8, generator=torch.Generator().manual_seed(1)))
    model, opt, loader = acc.prepare(model, opt, DataLoader(data, batch_size=4))
    for (x,) in loader:
        loss = model(x).pow(2).mean()
        opt.zero_grad()
        acc.backward(loss)
        opt.step()
    addr, port = torch_store_endpoint()
    extra = {"distributed_type": str(acc.distributed_type).split(".")[-1],
             "num_processes": acc.num_processes}
    if "PET_MASTER_PORT" in os.environ:
        # Under accelerate launch the worker's MASTER_* are torchrun's; the step's went to PET_*.
        extra.update(launcher="accelerate-launch", env_addr=os.environ["PET_MASTER_ADDR"],
                     env_port=os.environ["PET_MASTER_PORT"],
                     worker_port=os.environ.get("MASTER_PORT", "-"))
    else:
        extra["launcher"] = "srun"
    report("accelerate_ddp", acc.process_index, acc.num_processes, addr, port,
           digest_torch(acc.unwrap_model(model)), **extra)
    acc.wait_for_everyone()
    acc.end_training()


if __name__ == "__main__":
    main()
