/* SPDX-License-Identifier: Apache-2.0 */
/* The native rank of tests/integration/test_stacks.sh: waits in a function of its own. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((noinline)) static void native_wait_here(void) {
    for (;;) sleep(1000);
}

int main(void) {
    const char* rank = getenv("RANK");
    printf("HANG-READY rank=%s\n", rank ? rank : "?");
    fflush(stdout);
    native_wait_here();
    return 0;
}
