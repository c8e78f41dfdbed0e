/* SPDX-License-Identifier: Apache-2.0 */
/* What loading a shared object costs a C process that has not loaded it, as srun and slurmstepd
 * load the SPANK plugin: dlopen(argv[1], RTLD_NOW), then exit (link_options.sh counts its
 * instructions under callgrind, against the same program loading nothing). */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char** argv) {
    if (argc < 2) return 0; /* the baseline: the program alone */
    if (dlopen(argv[1], RTLD_NOW | RTLD_LOCAL) == NULL) {
        fprintf(stderr, "dlopen_client: %s\n", dlerror());
        return 1;
    }
    return 0;
}
