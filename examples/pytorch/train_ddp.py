#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A complete PyTorch DDP trainer that runs unchanged under `srun --ddp`.

No launcher, no wrapper: `srun --ddp` sets RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and
MASTER_PORT, so `init_process_group(init_method="env://")` just works. Backend: nccl when a GPU is
visible, gloo otherwise.

    srun --ddp -N2 --ntasks-per-node=2 python3 examples/pytorch/train_ddp.py --epochs 3

The habits that are easy to get wrong are all here: DistributedSampler with set_epoch, loss
logged by rank 0 only, checkpoint written by rank 0 and resumable by every rank, and a final
check that every rank holds identical weights.
"""
import argparse
import os
import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def log(msg):
    """Only rank 0 talks: N ranks printing the same loss is noise."""
    if dist.get_rank() == 0:
        print(f"[rank 0/{dist.get_world_size()}] {msg}", flush=True)


def synthetic_dataset(n=4096, features=32, seed=1234):
    """A fixed regression problem (y = X w + noise), identical on every rank."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, features, generator=g)
    w = torch.randn(features, 1, generator=g)
    y = x @ w + 0.01 * torch.randn(n, 1, generator=g)
    return TensorDataset(x, y)


def make_model(features=32):
    torch.manual_seed(0)  # DDP broadcasts rank 0's weights anyway; this makes runs repeatable
    return torch.nn.Sequential(torch.nn.Linear(features, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--checkpoint", default="", help="path to save/resume (rank 0 writes)")
    args = p.parse_args()

    for var in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
        if var not in os.environ:
            sys.exit(f"{var} is not set: run under `srun --ddp` (or torchrun)")

    use_cuda = torch.cuda.is_available()
    local_rank = int(os.environ["LOCAL_RANK"])
    if use_cuda:
        # With --ddp's default gpu-bind=local, device LOCAL_RANK is this task's own GPU.
        device_index = int(os.environ.get("SLURM_DDP_DEVICE", local_rank))
        torch.cuda.set_device(device_index)
        device = torch.device("cuda", device_index)
    else:
        device = torch.device("cpu")
    dist.init_process_group(backend="nccl" if use_cuda else "gloo", init_method="env://")
    log(f"backend {dist.get_backend()}, MASTER_ADDR={os.environ['MASTER_ADDR']}:"
        f"{os.environ['MASTER_PORT']}, device {device}")

    dataset = synthetic_dataset()
    sampler = DistributedSampler(dataset, shuffle=True, seed=42)
    loader = DataLoader(dataset, batch_size=args.batch_size, sampler=sampler)
    model = make_model().to(device)
    ddp = DDP(model, device_ids=[device.index] if use_cuda else None)
    opt = torch.optim.SGD(ddp.parameters(), lr=args.lr)

    start_epoch = 0
    if args.checkpoint and os.path.exists(args.checkpoint):
        state = torch.load(args.checkpoint, map_location=device)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        start_epoch = state["epoch"] + 1
        log(f"resumed from {args.checkpoint} at epoch {start_epoch}")

    for epoch in range(start_epoch, args.epochs):
        sampler.set_epoch(epoch)  # without it every epoch sees the same shuffle
        total, batches, t0 = torch.zeros((), device=device), 0, time.time()
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            opt.zero_grad()
            loss = torch.nn.functional.mse_loss(ddp(x), y)
            loss.backward()  # DDP averages gradients across ranks here
            opt.step()
            total += loss.detach()
            batches += 1
        dist.all_reduce(total)  # mean loss over all ranks, not just rank 0's shard
        mean = total.item() / (batches * dist.get_world_size())
        log(f"epoch {epoch} loss {mean:.6f} ({time.time() - t0:.2f}s)")
        if args.checkpoint and dist.get_rank() == 0:
            tmp = args.checkpoint + ".tmp"
            torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "epoch": epoch}, tmp)
            os.replace(tmp, args.checkpoint)  # atomic: a crash never leaves half a checkpoint
        # Nobody resumes from a checkpoint rank 0 is still writing. The device named: NCCL
        # barriers warn on every rank otherwise (PyTorch 2.x).
        if use_cuda:
            dist.barrier(device_ids=[device.index])
        else:
            dist.barrier()

    # Every rank must hold exactly rank 0's weights: compare a checksum across ranks.
    flat = torch.cat([p.detach().reshape(-1) for p in model.parameters()]).double()
    mine = torch.stack([flat.sum(), (flat * flat).sum()])
    ref = mine.clone()
    dist.broadcast(ref, src=0)
    same = torch.tensor([1 if torch.equal(mine, ref) else 0], device=device)
    dist.all_reduce(same, op=dist.ReduceOp.MIN)
    if same.item() != 1:
        print(f"rank {dist.get_rank()}: weights differ from rank 0", file=sys.stderr, flush=True)
        dist.destroy_process_group()
        return 1
    log(f"OK: {dist.get_world_size()} ranks hold identical weights (checksum {ref[0].item():.6f})")
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
