# SPDX-License-Identifier: Apache-2.0
"""submitit's `TorchDistributedEnvironment` inside a --ddp step: what does `export()` do to the
variables --ddp already set?

- `export()` with its defaults refuses ("Cannot export environment variables as MASTER_ADDR is
  already set"): the step has them all.
- `export(overwrite=True, set_cuda_visible_devices=False)` rewrites them from submitit's own view
  (first host of SLURM_JOB_NODELIST, MASTER_PORT read back from the environment, SLURM_PROCID,
  SLURM_NTASKS): the same values as --ddp's in a step that spans the job in block order.

Runs the torch process group after the export, so the report shows the rendezvous that follows.
Run by `srun --ddp` directly, or as the function of a submitit job (submitit_executor.py).
"""
import contextlib
import io
import os

import torch
import torch.distributed as dist
from submitit.helpers import TorchDistributedEnvironment

from stack_report import digest_arrays, report, torch_store_endpoint

KEYS = ("MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE")


def main():
    before = {k: os.environ.get(k) for k in KEYS}
    try:
        TorchDistributedEnvironment().export()
        default_export = "ok"
    except RuntimeError as e:
        default_export = "refused" if "already set" in str(e) else "error"

    env = TorchDistributedEnvironment().export(overwrite=True, set_cuda_visible_devices=False)
    changed = [k for k in KEYS if os.environ.get(k) != before[k]]

    dist.init_process_group("gloo")
    t = torch.arange(4, dtype=torch.float64) + dist.get_rank()
    dist.all_reduce(t)
    addr, port = torch_store_endpoint()
    report(
        "submitit",
        dist.get_rank(),
        dist.get_world_size(),
        addr,
        port,
        digest_arrays([t.numpy()]),
        default_export=default_export,
        changed=",".join(changed) or "none",
        submitit_port=env.master_port,
    )
    dist.destroy_process_group()


def submitit_task():
    """The job function of submitit_executor.py: the STACK line comes back as its result."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        main()
    return buf.getvalue().strip()


if __name__ == "__main__":
    main()
