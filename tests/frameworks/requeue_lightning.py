# SPDX-License-Identifier: Apache-2.0
"""Lightning `Trainer(strategy="ddp")` in its Slurm mode (SLURMEnvironment, one process per rank
by srun) that a requeued job resumes: the user's program has no signal handler of its own.

On SIGUSR1 Lightning's own handler (auto_requeue) saves `hpc_ckpt_N.ckpt` in default_root_dir
and rank 0 runs `scontrol requeue`; the next run's fit() restores that checkpoint by itself.
A resumed run (SLURM_DDP_RESTARTS > 0) stops 20 steps after where it resumed.

Usage: requeue_lightning.py OUT_DIR   (marker files started.<rank>.<restarts>.<step> and
done.<rank>.<restarts>.<step>; the first line says which handler owns SIGUSR1)
"""
import os
import sys
import time

import pytorch_lightning as pl
import torch
from torch.utils.data import DataLoader, TensorDataset

from lightning_ddp import sigusr1_owner


class Slow(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(8, 4)

    # Lightning 2.5-2.6 saves its checkpoint inside the SIGUSR1 handler, a collective: a rank
    # that the signal finds blocked in the gradient all-reduce runs its handler only after it, while
    # the other rank's handler already waits in the checkpoint's barrier, and the two hang
    # (Lightning-AI/pytorch-lightning#21406). A step that is mostly sleep keeps the all-reduce, and
    # so that window, a small part of each step.
    def training_step(self, batch, _):
        time.sleep(0.25)
        (x,) = batch
        return self.layer(x).pow(2).mean()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.01)


class Marks(pl.Callback):
    def __init__(self, out, restarts):
        self.out, self.restarts, self.start = out, restarts, None

    def mark(self, trainer, what):
        name = f"{what}.{trainer.global_rank}.{self.restarts}.{trainer.global_step}"
        open(os.path.join(self.out, name), "w").close()

    def on_train_start(self, trainer, _):
        self.start = trainer.global_step
        self.mark(trainer, "started")
        print(f"REQUEUE rank={trainer.global_rank} sigusr1={sigusr1_owner()} "
              f"env={type(trainer.strategy.cluster_environment).__name__}", flush=True)

    def on_train_batch_end(self, trainer, *_):
        if self.restarts > 0 and trainer.global_step >= self.start + 20:
            trainer.should_stop = True

    def on_train_end(self, trainer, _):
        self.mark(trainer, "done")


def main():
    out = sys.argv[1]
    restarts = int(os.environ.get("SLURM_DDP_RESTARTS", "-1"))
    pl.seed_everything(0, verbose=False)
    data = TensorDataset(torch.randn(4096, 8, generator=torch.Generator().manual_seed(1)))
    trainer = pl.Trainer(strategy="ddp", accelerator="cpu", devices=int(os.environ["SLURM_NTASKS_PER_NODE"]),
                         num_nodes=int(os.environ["SLURM_NNODES"]), max_epochs=100,
                         default_root_dir=out, logger=False, enable_checkpointing=False,
                         enable_progress_bar=False, enable_model_summary=False,
                         callbacks=[Marks(out, restarts)])
    trainer.fit(Slow(), DataLoader(data, batch_size=4))
    return 0


if __name__ == "__main__":
    sys.exit(main())
