# SPDX-License-Identifier: Apache-2.0
"""Hugging Face Transformers `Trainer` as users write it, run by `srun --ddp` with no launcher.

A 2-layer GPT-2 built from a config (nothing downloaded) trains a few steps on random tokens made
in code. `TrainingArguments` sets up the process group through accelerate's `PartialState`, which
reads RANK/WORLD_SIZE/LOCAL_RANK/MASTER_ADDR/MASTER_PORT: the variables --ddp exports.
"""
import os
import tempfile

import torch
import torch.distributed as dist
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments

from stack_report import digest_torch, report, torch_store_endpoint


class RandomTokens(torch.utils.data.Dataset):
    """The same sequences on every rank; the Trainer's sampler splits them."""

    def __init__(self, n, length, vocab):
        g = torch.Generator().manual_seed(0)
        self.ids = torch.randint(0, vocab, (n, length), generator=g)

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "labels": self.ids[i]}


def main():
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=64, n_positions=16, n_embd=32, n_layer=2, n_head=2)
    model = GPT2LMHeadModel(config)
    out_dir = tempfile.TemporaryDirectory(prefix="hf-trainer-")
    args = TrainingArguments(
        output_dir=out_dir.name,
        use_cpu=True,
        report_to=[],
        save_strategy="no",
        per_device_train_batch_size=2,
        max_steps=3,
        learning_rate=1e-2,
        logging_strategy="no",
        disable_tqdm=True,
        seed=0,
    )
    trainer = Trainer(model=model, args=args, train_dataset=RandomTokens(32, 16, 64))
    trainer.train()

    addr, port = torch_store_endpoint()
    report(
        "transformers",
        dist.get_rank(),
        dist.get_world_size(),
        addr,
        port,
        digest_torch(trainer.model),
        trainer_world=args.world_size,
        trainer_rank=args.process_index,
        env_rank=os.environ.get("RANK", "-"),
        steps=trainer.state.global_step,
        backend=dist.get_backend(),
    )
    # Rank 0 hosts the TCPStore: tearing it down while another rank still talks to it has made
    # rank 0 abort at exit in gloo's teardown ("terminate called without an active exception").
    dist.barrier()
    dist.destroy_process_group()
    out_dir.cleanup()


if __name__ == "__main__":
    main()
