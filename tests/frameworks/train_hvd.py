# SPDX-License-Identifier: Apache-2.0
"""A Horovod trainer as users launched it with mpirun, unchanged under `srun --ddp --mpi=pmix`:
hvd.init() takes its ranks from MPI (Open MPI through Slurm's PMIx), the optimizer averages
gradients across ranks, and rank 0's parameters are broadcast first. The report adds what
Horovod says of each rank beside what --ddp exported, so the test can hold them side by side.
"""
import os

import horovod.torch as hvd
import torch

from stack_report import digest_torch, report


def main():
    hvd.init()
    rank, size = hvd.rank(), hvd.size()
    torch.manual_seed(0)
    model = torch.nn.Linear(8, 4)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    opt = hvd.DistributedOptimizer(opt, named_parameters=model.named_parameters())
    hvd.broadcast_parameters(model.state_dict(), root_rank=0)
    gen = torch.Generator().manual_seed(100 + rank)  # different data per rank: gradients averaged
    for _ in range(5):
        loss = model(torch.randn(16, 8, generator=gen)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    env = os.environ.get
    report("horovod", rank, size, "mpi" if hvd.mpi_enabled() else "gloo", "-", digest_torch(model),
           hvd_local_rank=hvd.local_rank(), hvd_local_size=hvd.local_size(),
           env_rank=env("RANK", "-"), env_local_rank=env("LOCAL_RANK", "-"),
           env_local_size=env("LOCAL_WORLD_SIZE", "-"), cvd=env("CUDA_VISIBLE_DEVICES", "-"),
           device=env("SLURM_DDP_DEVICE", "-"))
    hvd.shutdown()


if __name__ == "__main__":
    main()
