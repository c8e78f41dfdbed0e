// SPDX-License-Identifier: Apache-2.0
/* mpi_bcast: MPI's point of comparison for the bootstrap benchmarks (bench/run.sh runs it
 * under mpirun).
 *
 * After MPI_Init and an MPI_Barrier, rank 0 reads CLOCK_MONOTONIC (the start) and broadcasts a
 * 128-byte id with MPI_Bcast; every rank reads CLOCK_MONOTONIC once it has the bytes ("id"),
 * then does MPI_Allgather of a 64-byte record ("allgather"). All ranks run on one machine, so
 * CLOCK_MONOTONIC is common. MPI's wire-up (MPI_Init) is NOT in these two numbers: they are
 * "after the rendezvous". If SDDP_BENCH_T0 (CLOCK_MONOTONIC seconds, set just before exec'ing
 * mpirun) is given, the time from then to every rank having the id is also printed ("launch"),
 * which includes mpirun, process start-up and MPI_Init.
 *
 * Output (rank 0): MPIRUN n=<N> id=<s> ag=<s> launch=<s or -1>
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    unsigned char id[128], mine[64];
    unsigned char* table = malloc((size_t)n * 64);
    if (rank == 0)
        for (int i = 0; i < 128; ++i) id[i] = (unsigned char)(i * 131 + 7);
    for (int i = 0; i < 64; ++i) mine[i] = (unsigned char)(rank * 31 + i * 17 + 3);
    MPI_Barrier(MPI_COMM_WORLD);
    double t[3];
    t[0] = now_s();
    MPI_Bcast(id, 128, MPI_BYTE, 0, MPI_COMM_WORLD);
    t[1] = now_s();
    MPI_Allgather(mine, 64, MPI_BYTE, table, 64, MPI_BYTE, MPI_COMM_WORLD);
    t[2] = now_s();
    int bad = id[5] != (unsigned char)(5 * 131 + 7) ||
              table[(n - 1) * 64 + 5] != (unsigned char)((n - 1) * 31 + 5 * 17 + 3);
    double* all = rank == 0 ? malloc(sizeof(double) * 3 * (size_t)n) : NULL;
    MPI_Gather(t, 3, MPI_DOUBLE, all, 3, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    int anybad = 0;
    MPI_Reduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        double start = all[0], id_done = 0, ag_done = 0;
        for (int r = 0; r < n; ++r) {
            if (all[3 * r + 1] > id_done) id_done = all[3 * r + 1];
            if (all[3 * r + 2] > ag_done) ag_done = all[3 * r + 2];
        }
        const char* t0 = getenv("SDDP_BENCH_T0");
        double launch = t0 ? id_done - atof(t0) : -1;
        if (anybad) fprintf(stderr, "mpi_bcast: WRONG BYTES\n");
        printf("MPIRUN n=%d id=%.6f ag=%.6f launch=%.6f\n", n, id_done - start, ag_done - start,
               launch);
    }
    MPI_Finalize();
    return anybad;
}
