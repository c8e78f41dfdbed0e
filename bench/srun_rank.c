// SPDX-License-Identifier: Apache-2.0
/* srun_rank: one task of the real-launch bootstrap benchmark (bench/srun_bench.sh).
 *
 * Started by `srun --ddp [--mpi=pmi2] -n N`, every task sleeps until the common start time
 * SDDP_BENCH_START (CLOCK_REALTIME seconds; every "node" of the local cluster shares this host's
 * clock), then runs the library exactly as a trainer would: sddp_init without NCCL (identity,
 * rendezvous over TCP or PMI2, the preflight), then a 128-byte broadcast from rank 0 (the NCCL
 * unique id's size and path). It appends one line to $SDDP_BENCH_OUT/<rank>:
 *     rank=<r> late=<s> init=<s> id=<s> transport=<tcp|pmi2>
 * times relative to the start; late > 0 means the task was not yet running at the start (srun
 * was still launching), which invalidates the repetition (the script reports it).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <slurm_ddp/bootstrap.h>

static double now_real(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(void) {
    const char* start_text = getenv("SDDP_BENCH_START");
    const char* out_dir = getenv("SDDP_BENCH_OUT");
    if (!start_text || !out_dir) {
        fprintf(stderr, "srun_rank: set SDDP_BENCH_START and SDDP_BENCH_OUT (bench/srun_bench.sh)\n");
        return 2;
    }
    const double start = strtod(start_text, NULL);
    const double late = now_real() - start;
    if (late < 0) {
        const double wait = -late;
        struct timespec ts = {(time_t)wait, (long)((wait - (double)(time_t)wait) * 1e9)};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
        }
    }

    sddp_options opts;
    sddp_options_init(&opts);
    opts.no_nccl = 1;
    opts.timeout_ms = 120000;
    sddp_handle* h = NULL;
    if (sddp_init(&opts, &h) != SDDP_OK) {
        fprintf(stderr, "srun_rank: %s\n", sddp_last_error());
        return 1;
    }
    const double t_init = now_real() - start;
    unsigned char id[128];
    for (int i = 0; i < 128; ++i) id[i] = (unsigned char)(sddp_rank(h) == 0 ? i * 7 + 1 : 0);
    if (sddp_broadcast(h, id, sizeof id, 0) != SDDP_OK) {
        fprintf(stderr, "srun_rank: %s\n", sddp_last_error());
        sddp_abort(h, "broadcast failed");
        return 1;
    }
    const double t_id = now_real() - start;
    for (int i = 0; i < 128; ++i) {
        if (id[i] != (unsigned char)(i * 7 + 1)) {
            fprintf(stderr, "srun_rank: rank %d got a wrong id byte %d\n", sddp_rank(h), i);
            sddp_abort(h, "wrong id");
            return 1;
        }
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/%d", out_dir, sddp_rank(h));
    FILE* f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "srun_rank: cannot write %s: %s\n", path, strerror(errno));
        sddp_abort(h, "cannot write results");
        return 1;
    }
    fprintf(f, "rank=%d late=%.6f init=%.6f id=%.6f transport=%s\n", sddp_rank(h), late, t_init,
            t_id, sddp_transport_name(h));
    fclose(f);
    /* Keep every connection up until all ranks are done, as the fork benchmark does. */
    if (sddp_barrier(h) != SDDP_OK) fprintf(stderr, "srun_rank: %s\n", sddp_last_error());
    return sddp_finalize(h) == SDDP_OK ? 0 : 1;
}
