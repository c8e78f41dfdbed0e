/* SPDX-License-Identifier: Apache-2.0 */
/* One rank of bench/process_cost as users run it: a plain C program that loads libslurm_ddp.so
 * and uses only its public C API (slurm_ddp/bootstrap.h), as a C program, a C++ program or
 * Python's ctypes would: sddp_init without NCCL (identity from RANK/WORLD_SIZE, the
 * authenticated TCP rendezvous, the preflight exchange), then the 128-byte id by
 * sddp_broadcast. It reports its CPU since exec and the wall time since the driver's spawn at the
 * moment it holds the id, and exits at once: teardown is not part of the measurement.
 *
 * The driver (process_cost, kind "capi") starts the same program as rank 0 first, with
 * SDDP_PC_ROLE=server: it serves the rendezvous and broadcasts the id.
 *
 * Environment (set by process_cost): RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT,
 * SLURM_DDP_SECRET, SDDP_PC_SPAWN_NS (CLOCK_MONOTONIC at the spawn; the client only),
 * SDDP_PC_ROLE. Output, one line: "cpu_ms=<ms> wall_ms=<ms>". */
#include <slurm_ddp/bootstrap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

enum { kIdBytes = 128 };
/* A client under callgrind runs ~50x slower than alone. */
static const long long kTimeoutMs = 120000;

static double cpu_ms(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-3;
}

static int fail(const char* what) {
    fprintf(stderr, "capi_client: %s: %s\n", what, sddp_last_error());
    return 1;
}

int main(void) {
    const char* role = getenv("SDDP_PC_ROLE");
    const int server = role != NULL && strcmp(role, "server") == 0;
    const char* spawn = getenv("SDDP_PC_SPAWN_NS");
    if (!server && spawn == NULL) {
        fprintf(stderr, "capi_client: SDDP_PC_SPAWN_NS is not set (run it through process_cost)\n");
        return 2;
    }
    sddp_options o;
    sddp_options_init(&o);
    o.no_nccl = 1;
    o.transport = SDDP_TRANSPORT_TCP;
    o.timeout_ms = kTimeoutMs;
    sddp_handle* h = NULL;
    if (sddp_init(&o, &h) != SDDP_OK) return fail("sddp_init");
    unsigned char id[kIdBytes];
    for (size_t i = 0; i < sizeof id; ++i) id[i] = server ? (unsigned char)(i * 131) : 0;
    if (sddp_broadcast(h, id, sizeof id, 0) != SDDP_OK) return fail("sddp_broadcast");
    if (server) return sddp_finalize(h) == SDDP_OK ? 0 : fail("sddp_finalize");

    const double cpu = cpu_ms();
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    const double wall = ((double)ts.tv_sec * 1e9 + (double)ts.tv_nsec - atof(spawn)) * 1e-6;
    if (id[5] != (unsigned char)(5 * 131 % 256)) {
        fprintf(stderr, "capi_client: wrong id\n");
        return 1;
    }
    printf("cpu_ms=%.4f wall_ms=%.4f\n", cpu, wall);
    fflush(stdout);
    _exit(0);
}
