// SPDX-License-Identifier: Apache-2.0
/* A stand-in for Slurm's libpmi2, for testing the PMI2 transport without Slurm.
 *
 * Ranks share a directory (FAKE_PMI2_DIR): PMI2_KVS_Put writes a file per key, PMI2_KVS_Fence
 * drops a marker and waits (without a timeout, like the real one) until every rank's marker for
 * that fence exists, PMI2_KVS_Get reads the key's file. Rank and size come from PMI_RANK and
 * PMI_SIZE, as Slurm's pmi2 plugin exports them. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int g_rank = -1, g_size = 0, g_init = 0, g_fence = 0;
static char g_dir[512];

int PMI2_Init(int* spawned, int* size, int* rank, int* appnum) {
    const char* d = getenv("FAKE_PMI2_DIR");
    const char* r = getenv("PMI_RANK");
    const char* s = getenv("PMI_SIZE");
    if (!d || !r || !s) return 1;
    snprintf(g_dir, sizeof g_dir, "%s", d);
    g_rank = atoi(r);
    g_size = atoi(s);
    *spawned = 0;
    *size = g_size;
    *rank = g_rank;
    *appnum = 0;
    g_init = 1;
    return 0;
}

int PMI2_Initialized(void) {
    return g_init;
}
int PMI2_Finalize(void) {
    g_init = 0;
    return 0;
}

int PMI2_Job_GetId(char jobid[], int jobid_size) {
    snprintf(jobid, (size_t)jobid_size, "fake.0");
    return 0;
}

int PMI2_KVS_Put(const char key[], const char value[]) {
    char path[1024], tmp[1100];
    if (strlen(value) > 1023 || strlen(key) > 63) return 2;
    snprintf(path, sizeof path, "%s/kvs.%s", g_dir, key);
    snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, g_rank);
    FILE* f = fopen(tmp, "w");
    if (!f) return 3;
    fputs(value, f);
    fclose(f);
    return rename(tmp, path) == 0 ? 0 : 4;
}

int PMI2_KVS_Fence(void) {
    char path[1024];
    int epoch = g_fence++;
    snprintf(path, sizeof path, "%s/fence.%d.%d", g_dir, epoch, g_rank);
    int fd = open(path, O_CREAT | O_WRONLY, 0600);
    if (fd < 0) return 5;
    close(fd);
    for (;;) { /* no timeout, like Slurm's */
        int present = 0;
        for (int r = 0; r < g_size; ++r) {
            struct stat st;
            snprintf(path, sizeof path, "%s/fence.%d.%d", g_dir, epoch, r);
            if (stat(path, &st) == 0) ++present;
        }
        if (present == g_size) return 0;
        usleep(2000);
    }
}

int PMI2_KVS_Get(const char* jobid, int src_pmi_id, const char key[], char value[], int maxvalue,
                 int* vallen) {
    char path[1024];
    (void)src_pmi_id;
    if (!jobid || strcmp(jobid, "fake.0") != 0) return 6; /* Slurm's needs the job id too */
    snprintf(path, sizeof path, "%s/kvs.%s", g_dir, key);
    FILE* f = fopen(path, "r");
    if (!f) return 7;
    size_t n = fread(value, 1, (size_t)maxvalue - 1, f);
    fclose(f);
    value[n] = '\0';
    *vallen = (int)n;
    return 0;
}

int PMI2_Abort(int flag, const char msg[]) {
    (void)msg;
    exit(flag); /* as Slurm's does: the library must never call this */
}
