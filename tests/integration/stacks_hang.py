# SPDX-License-Identifier: Apache-2.0
# A hung step for tests/integration/test_stacks.sh: ranks 0, 1 and 3 wait in a gloo barrier
# that rank 2 never reaches, because it sleeps in stuck_here(). The step may hold more tasks
# (a native one), so the process group is the first four ranks only.
import datetime
import os
import time

import torch.distributed as dist

RANK = int(os.environ["RANK"])


def stuck_here():
    print(f"HANG-READY rank={RANK}", flush=True)
    while True:
        time.sleep(1000)


def wait_in_barrier():
    print(f"HANG-READY rank={RANK}", flush=True)
    dist.barrier()


dist.init_process_group("gloo", rank=RANK, world_size=4, timeout=datetime.timedelta(seconds=600))
if RANK == 2:
    stuck_here()
else:
    wait_in_barrier()
