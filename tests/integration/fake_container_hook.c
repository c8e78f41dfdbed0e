// SPDX-License-Identifier: Apache-2.0
/* Stands in for pyxis with enroot's PyTorch hook (neither installs here): in task_init it exports
 * MASTER_PORT=SLURM_JOB_ID % 4536 + 61000 with overwrite, as pyxis imports a container's
 * environment (pyxis_slurmstepd.c, spank_import_container_env) that enroot's
 * conf/hooks/extra/50-slurm-pytorch.sh filled. Listed before spank_ddp in plugstack.conf. */
#include <slurm/spank.h>
#include <stdio.h>
#include <stdlib.h>

extern const char plugin_name[];
extern const char plugin_type[];
extern const unsigned int plugin_version;
extern const unsigned int spank_plugin_version;
SPANK_PLUGIN(fake_container_hook, 1);

int slurm_spank_task_init(spank_t sp, int ac, char** av) {
    char job[32], port[16];
    (void)ac;
    (void)av;
    if (spank_getenv(sp, "SLURM_JOB_ID", job, sizeof job) != ESPANK_SUCCESS) return 0;
    snprintf(port, sizeof port, "%lu", strtoul(job, NULL, 10) % 4536 + 61000);
    spank_setenv(sp, "MASTER_PORT", port, 1);
    spank_setenv(sp, "FAKE_CONTAINER_HOOK", "ran", 1);
    return 0;
}
