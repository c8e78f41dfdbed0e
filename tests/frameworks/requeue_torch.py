# SPDX-License-Identifier: Apache-2.0
"""Plain PyTorch DDP (gloo) that saves on SIGUSR1 and resumes from its checkpoint, the handler
docs/lifecycle.md shows: run one process per rank by `srun --ddp=requeue` or as torchrun's
worker under `srun --ddp=launcher,requeue`.

The handler only sets a flag: a rank in the middle of a collective cannot save there. At each
step the ranks agree on the flag (an all-reduce), so they all stop at the same step, rank 0
saves, and every rank exits 0. A later run (SLURM_DDP_RESTARTS > 0) resumes from the checkpoint
and trains a few more steps.

Usage: requeue_torch.py OUT_DIR   (writes OUT_DIR/torch.ckpt and marker files
started.<rank>.<restarts>.<step>, saved.<rank>.<restarts>.<step>, done.<rank>.<restarts>.<step>)
"""
import os
import signal
import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

stop_requested = False


def on_sigusr1(signum, frame):
    global stop_requested
    stop_requested = True


def mark(out, what, rank, restarts, step):
    open(os.path.join(out, f"{what}.{rank}.{restarts}.{step}"), "w").close()


def main():
    out = sys.argv[1]
    signal.signal(signal.SIGUSR1, on_sigusr1)
    dist.init_process_group("gloo", init_method="env://")
    rank = dist.get_rank()
    restarts = int(os.environ.get("SLURM_DDP_RESTARTS", "-1"))
    ckpt = os.path.join(out, "torch.ckpt")
    torch.manual_seed(0)
    model = DDP(torch.nn.Linear(8, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    step = 0
    if os.path.exists(ckpt):
        state = torch.load(ckpt)
        model.module.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        step = state["step"]
    mark(out, "started", rank, restarts, step)
    last = step + 20 if restarts > 0 else 10**6  # a resumed run finishes by itself
    gen = torch.Generator().manual_seed(100 + rank)
    while step < last:
        flag = torch.tensor([1 if stop_requested else 0])
        dist.all_reduce(flag, op=dist.ReduceOp.MAX)
        if flag.item():
            if rank == 0:
                state = {"model": model.module.state_dict(), "opt": opt.state_dict(), "step": step}
                torch.save(state, ckpt + ".tmp")
                os.replace(ckpt + ".tmp", ckpt)
            dist.barrier()  # nobody leaves before the checkpoint is complete
            mark(out, "saved", rank, restarts, step)
            dist.destroy_process_group()
            return 0
        loss = model(torch.randn(16, 8, generator=gen)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        step += 1
        time.sleep(0.05)
    mark(out, "done", rank, restarts, step)
    dist.barrier()
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
