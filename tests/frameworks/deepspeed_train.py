# SPDX-License-Identifier: Apache-2.0
"""DeepSpeed on CPU: `deepspeed.init_distributed()` then `deepspeed.initialize()`, a few steps.

Run directly by `srun --ddp` (one task per rank) or as the worker of the `deepspeed` launcher
(which exports the same RANK/WORLD_SIZE/LOCAL_RANK/MASTER_ADDR/MASTER_PORT to each worker).

    python deepspeed_train.py [--stage N] [--backend gloo] [--name NAME]

DeepSpeed's CPU accelerator talks oneCCL when `oneccl_bindings_for_pytorch` is installed and gloo
otherwise; the optimizer is torch's Adam, since DeepSpeed's own CPU Adam is a C++ op compiled at
first use.
"""
import argparse
import json
import os

import torch

import deepspeed
import deepspeed.comm as ds_dist
import torch.distributed as dist
from deepspeed.accelerator import get_accelerator

from stack_report import digest_torch, report, torch_store_endpoint


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--stage", type=int, default=0)
    p.add_argument("--backend", default=None, help="dist_backend for init_distributed (default: the accelerator's)")
    p.add_argument("--name", default="deepspeed")
    p.add_argument("--config", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "deepspeed_config.json"))
    p.add_argument("--local_rank", type=int, default=None)  # the deepspeed launcher passes it
    a = p.parse_args()

    deepspeed.init_distributed(dist_backend=a.backend)
    rank, world = ds_dist.get_rank(), ds_dist.get_world_size()

    with open(a.config) as f:
        config = json.load(f)
    config["zero_optimization"] = {"stage": a.stage}

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    engine, _, _, _ = deepspeed.initialize(model=model, optimizer=optimizer, config=config)

    # Different data on every rank: only the gradients' all-reduce keeps the weights equal.
    g = torch.Generator().manual_seed(100 + rank)
    for _ in range(3):
        x = torch.randn(config["train_micro_batch_size_per_gpu"], 8, generator=g)
        loss = (engine(x) - x.sum(dim=1, keepdim=True)).pow(2).mean()
        engine.backward(loss)
        engine.step()

    addr, port = torch_store_endpoint()
    # One line per rank in one write(2) (stack_report): the launcher's workers share a pipe.
    report(
        a.name,
        rank,
        world,
        addr,
        port,
        digest_torch(engine.module),
        accelerator=get_accelerator().device_name(),
        backend=dist.get_backend(),
        zero=engine.zero_optimization_stage(),
        steps=engine.global_steps,
        env_rank=os.environ.get("RANK", "-"),
    )
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
