// SPDX-License-Identifier: Apache-2.0
/* srun_rank: one task of the real-launch bootstrap benchmark (bench/srun/srun_bench.sh).
 *
 * Started by `srun --ddp [--mpi=pmi2|pmix] -n N`, every task sleeps until the common start time
 * SDDP_BENCH_START (CLOCK_REALTIME seconds; every "node" of the local cluster shares this host's
 * clock), then runs the library exactly as a trainer would: sddp_init without NCCL (identity,
 * rendezvous over TCP, PMI2 or PMIx, the preflight), then a 128-byte broadcast from rank 0 (the
 * NCCL unique id's size and path), then a second one (what a broadcast costs once every rank
 * is past sddp_init, to tell the broadcast's own cost from the stragglers of init). It writes
 * one line to $SDDP_BENCH_OUT/<rank>:
 *     rank= node= late= launched= init= id= id2= cpu_start= cpu_init= cpu_id= stepd_cpu0=
 *     stepd_cpu1= stepd= transport=
 * late, init, id, id2: seconds from the start (late > 0: the task was not yet running at the
 * start, which invalidates the repetition); launched: when main() ran, in seconds after srun
 * was invoked (SDDP_BENCH_SRUN_T0), which shows Slurm's launch and its skew; cpu_*: this
 * process's CPU seconds (from exec) at the start / init done / id held; stepd_cpu0/1: CPU
 * seconds its parent (slurmstepd) had used when main() ran / after the second broadcast, to
 * separate the launcher's work during our phase from ours.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <slurm_ddp/bootstrap.h>

static double now_real(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double cpu_self(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* utime + stime of process `pid` in seconds, from /proc/<pid>/stat; -1 when unreadable. */
static double cpu_of(pid_t pid) {
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE* f = fopen(path, "r");
    if (!f) return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char* p = strrchr(buf, ')'); /* the command name may hold spaces */
    if (!p) return -1;
    unsigned long ut = 0, st = 0;
    /* after ")": state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime
     */
    if (sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
        return -1;
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

int main(void) {
    const double t_main = now_real();
    const pid_t stepd = getppid();
    const double stepd_cpu0 = cpu_of(stepd);
    const char* start_text = getenv("SDDP_BENCH_START");
    const char* out_dir = getenv("SDDP_BENCH_OUT");
    const char* t0_text = getenv("SDDP_BENCH_SRUN_T0");
    if (!start_text || !out_dir) {
        fprintf(stderr,
                "srun_rank: set SDDP_BENCH_START and SDDP_BENCH_OUT (bench/srun/srun_bench.sh)\n");
        return 2;
    }
    const double start = strtod(start_text, NULL);
    const double launched = t0_text ? t_main - strtod(t0_text, NULL) : -1;
    const double late = now_real() - start;
    if (late < 0) {
        const double wait = -late;
        struct timespec ts = {(time_t)wait, (long)((wait - (double)(time_t)wait) * 1e9)};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
        }
    }

    const double cpu_start = cpu_self();
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
    const double cpu_init = cpu_self();
    unsigned char id[128];
    double t_id = 0, t_id2 = 0, cpu_id = 0;
    for (int round = 0; round < 2; ++round) {
        for (int i = 0; i < 128; ++i)
            id[i] = (unsigned char)(sddp_rank(h) == 0 ? i * 7 + 1 + round : 0);
        if (sddp_broadcast(h, id, sizeof id, 0) != SDDP_OK) {
            fprintf(stderr, "srun_rank: %s\n", sddp_last_error());
            sddp_abort(h, "broadcast failed");
            return 1;
        }
        if (round == 0) {
            t_id = now_real() - start;
            cpu_id = cpu_self();
        } else {
            t_id2 = now_real() - start;
        }
        for (int i = 0; i < 128; ++i) {
            if (id[i] != (unsigned char)(i * 7 + 1 + round)) {
                fprintf(stderr, "srun_rank: rank %d got a wrong id byte %d\n", sddp_rank(h), i);
                sddp_abort(h, "wrong id");
                return 1;
            }
        }
    }
    const double stepd_cpu1 = cpu_of(stepd);
    char node[256] = "?";
    gethostname(node, sizeof node - 1);
    char path[4096];
    snprintf(path, sizeof path, "%s/%d", out_dir, sddp_rank(h));
    FILE* f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "srun_rank: cannot write %s: %s\n", path, strerror(errno));
        sddp_abort(h, "cannot write results");
        return 1;
    }
    fprintf(f,
            "rank=%d node=%s late=%.6f launched=%.6f init=%.6f id=%.6f id2=%.6f cpu_start=%.6f "
            "cpu_init=%.6f cpu_id=%.6f stepd_cpu0=%.3f stepd_cpu1=%.3f stepd=%s:%d transport=%s\n",
            sddp_rank(h), node, late, launched, t_init, t_id, t_id2, cpu_start, cpu_init, cpu_id,
            stepd_cpu0, stepd_cpu1, node, (int)stepd, sddp_transport_name(h));
    fclose(f);
    /* Keep every connection up until all ranks are done, as the fork benchmark does. */
    if (sddp_barrier(h) != SDDP_OK) fprintf(stderr, "srun_rank: %s\n", sddp_last_error());
    return sddp_finalize(h) == SDDP_OK ? 0 : 1;
}
