/* SPDX-License-Identifier: Apache-2.0 */
/* The ncclConfig_t fields slurm-ddp sets, as one nccl.h lays them out: compiled once against the
 * headers this build uses and once against each NCCL wheel's (nccl_versions_test.sh). NCCL
 * copies min(config->size, its own sizeof) bytes and checks magic, so the handshake holds when
 * every field we set sits where that NCCL reads it. */
#include <nccl.h>
#include <stddef.h>
#include <stdio.h>

int main(void) {
    ncclConfig_t c = NCCL_CONFIG_INITIALIZER;
    printf("size@%zu magic@%zu version@%zu blocking@%zu splitShare@%zu magic=%#x\n",
           offsetof(ncclConfig_t, size), offsetof(ncclConfig_t, magic),
           offsetof(ncclConfig_t, version), offsetof(ncclConfig_t, blocking),
           offsetof(ncclConfig_t, splitShare), c.magic);
    printf("sizeof=%zu\n", sizeof(ncclConfig_t));
    return 0;
}
