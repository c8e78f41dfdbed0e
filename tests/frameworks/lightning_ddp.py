# SPDX-License-Identifier: Apache-2.0
"""Lightning 2.6 `Trainer(strategy="ddp", accelerator="cpu")` with a tiny LightningModule, run
one process per rank by srun. Reports which cluster environment Lightning chose, whether its
SLURM auto-requeue handler (SIGUSR1) is installed during fit, and where its process group met.
"""
import argparse
import os
import signal

import pytorch_lightning as pl
import torch
from pytorch_lightning.trainer.connectors.signal_connector import _HandlersCompose
from torch.utils.data import DataLoader, TensorDataset

from stack_report import digest_torch, report, torch_store_endpoint


class Tiny(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(8, 4)

    def training_step(self, batch, _):
        (x,) = batch
        return self.layer(x).pow(2).mean()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def sigusr1_owner():
    """'lightning' when SIGUSR1 runs Lightning's SLURM requeue handler, else what it runs."""
    h = signal.getsignal(signal.SIGUSR1)
    if isinstance(h, _HandlersCompose):
        names = [getattr(f, "__name__", "?") for f in h.signal_handlers]
        if "_slurm_sigusr_handler_fn" in names:
            return "lightning"
        return "compose:" + "+".join(names)
    return getattr(h, "name", repr(h)).replace(" ", "_")


class Probe(pl.Callback):
    """Records, while fit runs (Lightning restores the signal handlers at its end), what a
    user would look at."""

    def on_train_start(self, trainer, _):
        env = trainer.strategy.cluster_environment
        self.seen = {
            "env": type(env).__name__,
            "sigusr1": sigusr1_owner(),
            "main_addr": env.main_address,
            "main_port": env.main_port,
        }
        self.endpoint = torch_store_endpoint()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--devices", type=int, default=2)
    ap.add_argument("--num-nodes", type=int, default=2)
    ap.add_argument("--name", default="lightning_ddp")
    args = ap.parse_args()
    pl.seed_everything(0, verbose=False)
    data = TensorDataset(torch.randn(64, 8, generator=torch.Generator().manual_seed(1)))
    model, probe = Tiny(), Probe()
    trainer = pl.Trainer(strategy="ddp", accelerator="cpu", devices=args.devices,
                         num_nodes=args.num_nodes, max_epochs=1, logger=False,
                         enable_checkpointing=False, enable_progress_bar=False,
                         enable_model_summary=False, callbacks=[probe])
    trainer.fit(model, DataLoader(data, batch_size=4))
    addr, port = probe.endpoint
    report(args.name, trainer.global_rank, trainer.world_size, addr, port, digest_torch(model),
           job=os.environ.get("SLURM_JOB_ID", "-"), step=os.environ.get("SLURM_STEP_ID", "-"),
           **probe.seen)


if __name__ == "__main__":
    main()
