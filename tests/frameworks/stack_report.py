# SPDX-License-Identifier: Apache-2.0
"""One line per rank that tests/frameworks/stack_lib.sh checks: what a user checks of a run.

Every trainer of tests/frameworks/ ends with `report(...)`, which prints

    STACK <name> rank=R world=W addr=HOST port=P weights=SHA256 env_addr=.. env_port=.. ports=..

`addr`/`port` are where the framework really rendezvoused (read back from its store or config,
not from the environment), `weights` a digest of the final parameters (or of a collective's
result), and the `env_*`/`ports` fields what --ddp exported, so the shell can tell "used the
step's MASTER_ADDR/MASTER_PORT" from "derived a port of its own".
"""
import hashlib
import os
import sys


def digest_arrays(arrays):
    """SHA-256 over the raw bytes of numpy-convertible arrays, in order."""
    h = hashlib.sha256()
    for a in arrays:
        h.update(memoryview(a.tobytes() if hasattr(a, "tobytes") else bytes(a)))
    return h.hexdigest()[:16]


def digest_torch(module):
    return digest_arrays(p.detach().cpu().contiguous().numpy() for p in module.parameters())


def torch_store_endpoint():
    """(host, port) of the default process group's TCPStore: where the ranks really met."""
    import torch.distributed as dist

    store = dist.distributed_c10d._get_default_store()
    while hasattr(store, "underlying_store"):  # PrefixStore wraps the TCPStore
        store = store.underlying_store
    return store.host, store.port


def report(name, rank, world, addr, port, weights, **extra):
    fields = {
        "rank": rank,
        "world": world,
        "addr": addr,
        "port": port,
        "weights": weights,
        "env_addr": os.environ.get("MASTER_ADDR", "-"),
        "env_port": os.environ.get("MASTER_PORT", "-"),
        "ports": os.environ.get("SLURM_DDP_PORTS", "-"),
        "host": os.uname().nodename,
    }
    fields.update(extra)
    line = "STACK " + name + " " + " ".join(f"{k}={v}" for k, v in fields.items()) + "\n"
    # One write(2): workers of a launcher share a pipe, and print() under `python -u` writes the
    # text and the newline separately, so two ranks' lines could interleave.
    sys.stdout.flush()
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # a caller captures stdout (io.StringIO)
        sys.stdout.write(line)
        return
    os.write(fd, line.encode())
