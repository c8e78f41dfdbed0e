/* SPDX-License-Identifier: Apache-2.0 */
/* The rank of tests/integration/test_stacks.sh that sits in uninterruptible sleep (state D): a
 * vfork() parent waits in the kernel until its child execs or exits, which this child never
 * does. The wait is killable, so scancel still ends the step. A process stopped with SIGSTOP
 * would be in state T, not D; short of a hung file system or device, this is the way to hold
 * one in D, where no tool can attach and reading its memory-backed /proc files may block. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(void) {
    const char* rank = getenv("RANK");
    printf("HANG-READY rank=%s\n", rank ? rank : "?");
    fflush(stdout);
    if (vfork() == 0) {
        /* Shares the parent's memory and stack: it touches nothing and never returns. */
        for (;;) pause();
    }
    return 0;
}
