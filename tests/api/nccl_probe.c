/* What libslurm_ddp finds at run time: "have_nccl=1 version=22809". With "init": a world of one
 * through sddp_init, printing the status and the message. */
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
        if (h) sddp_finalize(h);
    }
    return 0;
}
