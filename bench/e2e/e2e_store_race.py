#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What a rank pays for reaching init_process_group before rank 0 listens, in this PyTorch.

    /usr/bin/python3 bench/e2e/e2e_store_race.py [DELAY ...]   (default 0.01 0.2 0.5 1.2)

A TCPStore client starts at once; its server (as rank 0's init_process_group would) starts
DELAY seconds later on the same port. Prints when the client got through. PyTorch 1.13 retries
a refused connect after a fixed 1 s: 1.02 s for a server 10 ms late, 2.03 s for 1.2 s late.
bench/e2e/e2e_launch.sh's (a) and (c) ranks race their store this way; the workers of
torch.distributed.launch use its launcher's store, already listening.
"""
import datetime
import os
import socket
import subprocess
import sys
import time

from torch.distributed import TCPStore


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    # The output is a raw file: the header of bench/lib/raw_header.sh first.
    here = os.path.dirname(os.path.abspath(__file__))
    subprocess.run(["bash", os.path.join(here, "..", "lib", "raw_header.sh"),
                    "python3 bench/e2e/e2e_store_race.py " + " ".join(sys.argv[1:])], check=False)
    sys.stdout.flush()
    delays = [float(d) for d in sys.argv[1:]] or [0.01, 0.2, 0.5, 1.2]
    timeout = datetime.timedelta(seconds=30)
    for delay in delays:
        port = free_port()
        t0 = time.time()
        pid = os.fork()
        if pid == 0:
            TCPStore("127.0.0.1", port, 2, False, timeout)
            print(f"server listening after {delay:.2f} s: client connected after "
                  f"{time.time() - t0:.3f} s", flush=True)
            os._exit(0)
        time.sleep(delay)
        server = TCPStore("127.0.0.1", port, 2, True, timeout)
        _, status = os.waitpid(pid, 0)
        del server
        if status != 0:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
