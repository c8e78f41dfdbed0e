# SPDX-License-Identifier: Apache-2.0
"""JAX multi-process on CPU as a user writes it under `srun --ddp=jax`: `initialize()` with no
arguments, then a cross-process collective (an all-gather and a psum over every process's device).

The STACK line reports the coordinator JAX really used (its own global state, not the
environment), the process id/count it settled on, and the collective's result, so the shell can
tell "rendezvoused where --ddp said" from "derived SLURM_JOB_ID % 4096 + 61440 on its own".
"""
import os
import time

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax._src import distributed  # noqa: E402
from jax.experimental import multihost_utils  # noqa: E402

from stack_report import digest_arrays, report  # noqa: E402

jax.distributed.initialize()
pid, nproc = jax.process_index(), jax.process_count()
coordinator = distributed.global_state.coordinator_address
host, port = coordinator.rsplit(":", 1)


def hold_for_other_steps():
    """With STACK_OVERLAP_DIR set, wait (bounded) until STACK_OVERLAP_COUNT processes of all the
    steps sharing the directory are initialized: proves their coordinators ran at the same time."""
    d, count = os.environ.get("STACK_OVERLAP_DIR"), int(os.environ.get("STACK_OVERLAP_COUNT", "0"))
    if not d:
        return "-"
    open(os.path.join(d, f"up.{os.environ.get('SLURM_STEP_ID')}.{pid}"), "w").close()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if sum(1 for n in os.listdir(d) if n.startswith("up.")) >= count:
            return "yes"
        time.sleep(0.2)
    return "no"


overlap = hold_for_other_steps()

# Every process contributes pid+1; both collectives must see all of them.
gathered = np.asarray(multihost_utils.process_allgather(np.array([pid + 1], dtype=np.int32)))
expected = nproc * (nproc + 1) // 2
gather_sum = int(gathered.sum())

# A psum across every device of every process, through a jitted computation on a global array.
mesh = jax.make_mesh((jax.device_count(),), ("p",))
sharding = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("p"))
local = [jax.device_put(jnp.array([float(pid + 1)]), d) for d in jax.local_devices()]
global_arr = jax.make_array_from_single_device_arrays((jax.device_count(),), sharding, local)
psum = float(jax.jit(lambda x: jnp.sum(x), out_shardings=jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec()))(global_arr))

ok = gather_sum == expected and psum == float(expected) * jax.local_device_count()
report("jax", pid, nproc, host, port, digest_arrays([gathered.ravel(), np.array([psum])]),
       gather_sum=gather_sum, psum=int(psum), expected=expected, collective_ok="yes" if ok else "no",
       devices=jax.device_count(), slurm_procid=os.environ.get("SLURM_PROCID", "-"),
       jax_coord_env=os.environ.get("JAX_COORDINATOR_ADDRESS", "-"),
       jax_nproc_env=os.environ.get("JAX_NUM_PROCESSES", "-"),
       jax_pid_env=os.environ.get("JAX_PROCESS_ID", "-"),
       step=os.environ.get("SLURM_STEP_ID", "-"), overlap=overlap,
       # Where JAX's own Slurm detection would have put the coordinator (slurm_cluster.py).
       jax_own_port=int(os.environ.get("SLURM_JOB_ID", "0")) % 4096 + 61440)
jax.distributed.shutdown()
