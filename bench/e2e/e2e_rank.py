#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The rank program of bench/e2e/e2e_launch.sh: what every method starts, one process per rank.

    e2e_rank.py            import torch, init_process_group("gloo", env://), one all-reduce of
                           a one-element tensor holding 1, then print one line and exit
    e2e_rank.py --floor    import torch and print the same line: no distributed init (the floor)

The line (wall-clock seconds, time.time(): every node of the local cluster shares the clock):
    E2E rank=R world=W sum=S start=T0 imported=T1 init=T2 done=T3
start: first line of this file ran (interpreter start-up is before it); imported: import
torch.distributed done; init: init_process_group returned; done: the all-reduce returned.
sum must equal world. Rank and world come from RANK/WORLD_SIZE (set by srun --ddp, by
torch.distributed.launch and by torchrun); under --floor from SLURM_PROCID/SLURM_NTASKS.
"""
import time

START = time.time()
import os  # noqa: E402
import sys  # noqa: E402

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

IMPORTED = time.time()


def main():
    # torch.distributed.launch (without --use_env) passes --local_rank=N to the script.
    args = [a for a in sys.argv[1:] if not a.startswith("--local_rank")]
    if args == ["--floor"]:
        rank = int(os.environ.get("SLURM_PROCID", "0"))
        world = int(os.environ.get("SLURM_NTASKS", "1"))
        t = time.time()
        print(f"E2E rank={rank} world={world} sum=0 start={START:.6f} imported={IMPORTED:.6f} "
              f"init={t:.6f} done={t:.6f}", flush=True)
        return 0
    if args:
        sys.exit(f"e2e_rank.py: unknown arguments {args} (only --floor)")
    dist.init_process_group("gloo", init_method="env://")
    init = time.time()
    t = torch.ones(1)
    dist.all_reduce(t)
    done = time.time()
    print(f"E2E rank={dist.get_rank()} world={dist.get_world_size()} sum={int(t.item())} "
          f"start={START:.6f} imported={IMPORTED:.6f} init={init:.6f} done={done:.6f}", flush=True)
    # The measurement ends at "done". The barrier keeps every rank (rank 0 holds the store)
    # alive until all have their result, so none sees a peer vanish mid-collective.
    dist.barrier()
    # Explicitly: left to interpreter shutdown, gloo's teardown sometimes aborts ("terminate
    # called without an active exception"), and the launcher then fails the whole step.
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
