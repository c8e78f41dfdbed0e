// SPDX-License-Identifier: Apache-2.0
/* A stand-in for OpenPMIx's libpmix, for testing the PMIx transport without a PMIx server.
 *
 * Ranks share a directory (FAKE_PMIX_DIR): PMIx_Put writes a file per (rank, key), PMIx_Fence
 * drops a marker and waits (without a timeout, like a real fence whose peer never comes) until
 * every rank's marker for that fence exists, PMIx_Get reads the file back as a byte object. The
 * rank and namespace come from PMIX_RANK / PMIX_NAMESPACE as a PMIx server exports them; the job
 * size (PMIX_JOB_SIZE) from FAKE_PMIX_SIZE. Only the ABI the transport uses is declared; it
 * matches pmix_common.h (checked in test_pmix_parts.cpp). PMIx_Value_destruct is left out on
 * purpose: the transport must then free values itself. */
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
    char nspace[256];
    uint32_t rank;
} pmix_proc_t;
typedef struct {
    char* bytes;
    size_t size;
} pmix_byte_object_t;
typedef struct {
    uint16_t type;
    union {
        bool flag;
        uint32_t uint32;
        pmix_byte_object_t bo;
        unsigned char pad[24];
    } data;
} pmix_value_t;
typedef struct {
    char key[512];
    uint32_t flags;
    pmix_value_t value;
} pmix_info_t;

enum { OK = 0, ERR = -1, BAD_PARAM = -27, NOT_FOUND = -46, WILDCARD = UINT32_MAX - 1 };
enum { T_UINT32 = 14, T_BYTE_OBJECT = 27 };

static int g_init = 0, g_size = 0, g_fence = 0;
static uint32_t g_rank = 0;
static char g_dir[512], g_ns[256];

int PMIx_Init(pmix_proc_t* proc, pmix_info_t* info, size_t ninfo) {
    (void)info;
    (void)ninfo;
    const char* d = getenv("FAKE_PMIX_DIR");
    const char* r = getenv("PMIX_RANK");
    const char* ns = getenv("PMIX_NAMESPACE");
    const char* s = getenv("FAKE_PMIX_SIZE");
    if (!d || !r || !ns || !s) return ERR;
    snprintf(g_dir, sizeof g_dir, "%s", d);
    snprintf(g_ns, sizeof g_ns, "%s", ns);
    g_rank = (uint32_t)atoi(r);
    g_size = atoi(s);
    memset(proc, 0, sizeof *proc);
    snprintf(proc->nspace, sizeof proc->nspace, "%s", g_ns);
    proc->rank = g_rank;
    ++g_init;
    return OK;
}

int PMIx_Initialized(void) {
    return g_init > 0;
}

int PMIx_Put(uint8_t scope, const char key[], pmix_value_t* val) {
    char path[2048], tmp[2100];
    if (scope != 3 || val->type != T_BYTE_OBJECT || strlen(key) > 511) return BAD_PARAM;
    snprintf(path, sizeof path, "%s/kvs.%u.%s", g_dir, g_rank, key);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE* f = fopen(tmp, "wb");
    if (!f) return ERR;
    if (val->data.bo.size &&
        fwrite(val->data.bo.bytes, 1, val->data.bo.size, f) != val->data.bo.size) {
        fclose(f);
        return ERR;
    }
    fclose(f);
    return rename(tmp, path) == 0 ? OK : ERR;
}

int PMIx_Commit(void) {
    return g_init ? OK : ERR;
}

int PMIx_Fence(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[], size_t ninfo) {
    char path[1024];
    (void)info;
    (void)ninfo;
    if (nprocs != 1 || procs[0].rank != WILDCARD || strcmp(procs[0].nspace, g_ns) != 0)
        return BAD_PARAM;
    int epoch = g_fence++;
    snprintf(path, sizeof path, "%s/fence.%d.%u", g_dir, epoch, g_rank);
    int fd = open(path, O_CREAT | O_WRONLY, 0600);
    if (fd < 0) return ERR;
    close(fd);
    for (;;) { /* no timeout */
        int present = 0;
        for (int r = 0; r < g_size; ++r) {
            struct stat st;
            snprintf(path, sizeof path, "%s/fence.%d.%d", g_dir, epoch, r);
            if (stat(path, &st) == 0) ++present;
        }
        if (present == g_size) return OK;
        usleep(2000);
    }
}

int PMIx_Get(const pmix_proc_t* proc, const char key[], const pmix_info_t info[], size_t ninfo,
             pmix_value_t** val) {
    (void)info;
    (void)ninfo;
    if (strcmp(proc->nspace, g_ns) != 0) return NOT_FOUND;
    pmix_value_t* v = calloc(1, sizeof *v);
    if (!v) return ERR;
    if (proc->rank == WILDCARD && strcmp(key, "pmix.job.size") == 0) {
        v->type = T_UINT32;
        v->data.uint32 = (uint32_t)g_size;
        *val = v;
        return OK;
    }
    char path[2048];
    snprintf(path, sizeof path, "%s/kvs.%u.%s", g_dir, proc->rank, key);
    FILE* f = fopen(path, "rb");
    if (!f) {
        free(v);
        return NOT_FOUND;
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    v->type = T_BYTE_OBJECT;
    v->data.bo.bytes = malloc(n > 0 ? (size_t)n : 1);
    v->data.bo.size = (size_t)n;
    if (n > 0 && fread(v->data.bo.bytes, 1, (size_t)n, f) != (size_t)n) {
        fclose(f);
        free(v->data.bo.bytes);
        free(v);
        return ERR;
    }
    fclose(f);
    *val = v;
    return OK;
}

const char* PMIx_Error_string(int status) {
    switch (status) {
        case OK:
            return "SUCCESS";
        case NOT_FOUND:
            return "NOT-FOUND";
        case BAD_PARAM:
            return "BAD-PARAM";
        default:
            return "ERROR";
    }
}
