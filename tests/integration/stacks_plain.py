# SPDX-License-Identifier: Apache-2.0
# A Python rank for tests/integration/test_stacks.sh, run by Debian's /usr/bin/python3 so that
# gdb's py-bt (python3-dbg) can read it: without py-spy its stack must still name the function
# it waits in, not only the interpreter's C frames.
import os
import time


def wait_in_plain_python():
    print(f"HANG-READY rank={os.environ.get('RANK', '?')}", flush=True)
    while True:
        time.sleep(1000)


wait_in_plain_python()
