// SPDX-License-Identifier: Apache-2.0
/* What libslurm_ddp finds at run time: "have_nccl=1 version=22809". With "init": sddp_init with
 * NCCL (a world of one, or the launcher's world), printing the status, the message and the
 * device chosen. */
#include <stdio.h>
#include <string.h>

#include "slurm_ddp/bootstrap.h"

int main(int argc, char** argv) {
    printf("have_nccl=%d version=%d\n", sddp_have_nccl(), sddp_nccl_version());
    if (argc > 1 && strcmp(argv[1], "init") == 0) {
        sddp_options o;
        sddp_options_init(&o);
        o.timeout_ms = 10000;
        sddp_handle* h = NULL;
        const int rc = sddp_init(&o, &h);
        printf("init=%s: %s\n", sddp_status_name(rc), sddp_last_error());
        if (h) {
            printf("rank %d of %d on %s: device %d\n", sddp_rank(h), sddp_world_size(h),
                   sddp_host(h), sddp_cuda_device(h));
            const int frc = sddp_finalize(h);
            printf("finalize=%s%s%s\n", sddp_status_name(frc), frc ? ": " : "",
                   frc ? sddp_last_error() : "");
        }
    }
    return 0;
}
