// SPDX-License-Identifier: Apache-2.0
/* c_minimal: the C API without NCCL. Every rank reports who it is, and rank 0 prints the host
 * of every rank, all-gathered over the rendezvous. Runs on CPU nodes:
 *     srun --ddp -N2 -n4 ./c_minimal                                                  */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <slurm_ddp/bootstrap.h>

#define HOST_LEN 64

int main(void) {
    sddp_options opts;
    sddp_options_init(&opts);
    opts.no_nccl = 1; /* identity + rendezvous only */

    sddp_handle* h = NULL;
    if (sddp_init(&opts, &h) != SDDP_OK) {
        fprintf(stderr, "%s\n", sddp_last_error());
        return 1;
    }
    const int rank = sddp_rank(h);
    const int world = sddp_world_size(h);
    printf(
        "rank %d of %d on %s: local rank %d of %d, node %d of %d (identity: %s, transport: %s)\n",
        rank, world, sddp_host(h), sddp_local_rank(h), sddp_local_world_size(h), sddp_node_rank(h),
        sddp_num_nodes(h), sddp_identity_source(h), sddp_transport_name(h));
    fflush(stdout);

    char mine[HOST_LEN];
    memset(mine, 0, sizeof mine);
    strncpy(mine, sddp_host(h), HOST_LEN - 1);
    char* all = calloc((size_t)world, HOST_LEN);
    if (!all || sddp_allgather(h, mine, HOST_LEN, all) != SDDP_OK) {
        fprintf(stderr, "%s\n", all ? sddp_last_error() : "out of memory");
        free(all);
        sddp_abort(h, "allgather failed");
        return 1;
    }
    if (rank == 0) {
        printf("hosts:");
        for (int r = 0; r < world; ++r) printf(" %d=%s", r, all + (size_t)r * HOST_LEN);
        printf("\n");
    }
    free(all);
    if (sddp_finalize(h) != SDDP_OK) {
        fprintf(stderr, "%s\n", sddp_last_error());
        return 1;
    }
    return 0;
}
