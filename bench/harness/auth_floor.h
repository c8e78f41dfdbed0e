/* SPDX-License-Identifier: Apache-2.0 */
/* The authenticated floor of bench/harness (auth_floor.c): the least a program must do to hand
 * a 128-byte id to N ranks that each prove they hold the step secret, and then all-gather a
 * 64-byte record per rank, with the same guarantees as the library's rendezvous. Plain C over
 * libc and Nettle; bootstrap_bench forks the ranks and calls af_run_rank in each. */
#ifndef SDDP_BENCH_AUTH_FLOOR_H
#define SDDP_BENCH_AUTH_FLOOR_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { AF_ID_BYTES = 128, AF_RECORD_BYTES = 64 };

struct af_job {
    int world;
    /* 1: a star, every rank over TCP to rank 0. > 1: two levels, nodes of per_node ranks: a
     * node's leader (its first rank) joins rank 0 over TCP, the node's other ranks join their
     * leader over an abstract Unix socket, as the library's ranks do under srun --ddp. */
    int per_node;
    uint16_t port; /* rank 0's TCP port on 127.0.0.1 */
    const uint8_t* secret;
    size_t secret_len;
    const char* step_tag; /* at most 64 bytes are used */
    /* Listeners opened before the ranks start (the -prelisten variants), or -1: rank 0's TCP
     * listener, and per node the leader's local one (NULL: none). */
    int tcp_listener;
    const int* local_listeners;
    /* 1: the library's contract, a complete world before the id: every rank is welcomed as it
     * proves itself, a leader tells rank 0 (sealed) once its node is complete, and rank 0 sends
     * the id, in a message of its own, only when every rank is in. 0: each rank's welcome
     * carries the id, as the bare floor writes it to each connection as it accepts. */
    int barrier;
    /* The id rank 0 hands out and each rank's record, as the harness checks them. */
    const uint8_t* id;
    void (*record_of)(int rank, uint8_t out[AF_RECORD_BYTES]);
    /* The harness's clocks, so that the floor's times are read exactly as ours are: wall time
     * and this process's CPU, in seconds. */
    double (*now)(void);
    double (*cpu)(void);
};

struct af_result {
    double t_id, cpu_id; /* CLOCK_MONOTONIC and this process's CPU seconds once it holds the id */
    double t_ag, cpu_ag; /* the same once it holds every rank's record */
    uint8_t id[AF_ID_BYTES];
    uint8_t* table; /* world * AF_RECORD_BYTES, malloc'd, rank r's record at r * 64 */
    char why[200];  /* on failure */
};

/* The abstract socket name of node `node`'s leader for this job (without the leading NUL):
 * from a hash of the secret, as the library's, so no other user can predict and squat it. */
void af_local_name(const struct af_job* job, int node, char out[40]);

/* An abstract Unix listener of that name (for the -prelisten variants), or -1. */
int af_listen_local(const char* name);

/* Runs rank `rank` of the job: 0 on success (res filled), -1 with res->why. Its sockets stay
 * open when it returns, so that no early close disturbs the ranks still working, and its memory
 * stays allocated, success or not: each rank is a forked child that exits right after. */
int af_run_rank(const struct af_job* job, int rank, struct af_result* res);

#ifdef __cplusplus
}
#endif

#endif
