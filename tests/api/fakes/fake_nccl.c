// SPDX-License-Identifier: Apache-2.0
/* A stand-in libnccl.so.2 for tests of the NCCL layer without a GPU: it records every call the
 * layer makes (fake_nccl_log) and follows a script from FAKE_NCCL (comma-separated words):
 *   split_hang     the parent of a split stays in progress; its child appears only on abort
 *   destroy_fail   ncclCommDestroy fails
 *   finalize_hang  a non-blocking communicator stays in progress after ncclCommFinalize
 *   init_fail      ncclCommInitRankConfig fails at once (only for rank FAKE_NCCL_FAIL_RANK
 *                  when that is set)
 *   finalize_block ncclCommFinalize of a blocking communicator blocks until some communicator
 *                  is aborted: an operation queued on it never completes (NCCL's finalize has
 *                  no barrier with the peers; it waits for this rank's own queued work)
 *   allreduce_block  ncclAllReduce blocks until some communicator is aborted (NCCL connecting
 *                  the peers on the first collective, a peer missing)
 *   allreduce_wrong  ncclAllReduce writes a sum one too small
 *   allreduce_fail   ncclAllReduce fails at once (ncclUnhandledCudaError)
 *   allreduce_hang   ncclAllReduce never completes (fake_cudart's cudaStreamQuery reads the
 *                  same word and answers cudaErrorNotReady for ever)
 * ncclCommAbort of a communicator while another thread is still inside a call on it is what
 * NCCL turns into a use after free (commReclaim frees it at once): the fake records
 * "abort cN under a running call" and leaves it allocated.
 * splitShare and blocking are read where NCCL reads them: a split shares resources when the
 * *parent's* config asked for it; NCCL_COMM_BLOCKING and NCCL_COMM_SPLIT_SHARE_RESOURCES
 * override every config.
 * FAKE_NCCL_VERSION overrides the version (default 22809).
 * ncclAllReduce (int64 sum, one element) writes nranks * (nranks + 1) / 2, the sum of rank + 1
 * over the communicator, into the receive buffer (fake_cudart's device memory is host memory).
 * Non-blocking calls report ncclInProgress for two polls, as NCCL's background jobs do; a
 * split's child is written only when its parent's job completes. */
#include <nccl.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ncclComm {
    int id;
    int blocking;
    int split_share; /* its config's splitShare: what its own splits do (NCCL's commAlloc) */
    int nranks;
    int polls_left;        /* > 0: in progress; -1: in progress for ever */
    ncclComm_t* child_out; /* a split job's output slot, written when the job completes */
    int in_call;           /* threads inside a blocking call on it, under mu */
    ncclComm_t child;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t aborted_cv = PTHREAD_COND_INITIALIZER;
static int aborts = 0; /* ncclCommAbort calls, under mu: what a blocked finalize waits for */
static char log_buf[16384];
static int next_id = 1;

static int scripted(const char* word) {
    const char* s = getenv("FAKE_NCCL");
    if (!s) return 0;
    const size_t n = strlen(word);
    for (const char* p = strstr(s, word); p; p = strstr(p + 1, word)) {
        if ((p == s || p[-1] == ',') && (p[n] == 0 || p[n] == ',')) return 1;
    }
    return 0;
}

/* The caller holds mu. */
static void record_locked(const char* fmt, int a, int b, int c, int d) {
    char line[128];
    snprintf(line, sizeof line, fmt, a, b, c, d);
    /* Consecutive identical lines (polls) collapse to one. */
    const size_t len = strlen(log_buf), ln = strlen(line);
    const int repeat = len >= ln + 1 && strncmp(log_buf + len - ln - 1, line, ln) == 0 &&
                       (len == ln + 1 || log_buf[len - ln - 2] == '\n');
    if (!repeat && len + ln + 2 < sizeof log_buf) {
        strcat(log_buf, line);
        strcat(log_buf, "\n");
    }
}

static void record(const char* fmt, int a, int b, int c, int d) {
    pthread_mutex_lock(&mu);
    record_locked(fmt, a, b, c, d);
    pthread_mutex_unlock(&mu);
}

const char* fake_nccl_log(void) {
    return log_buf;
}
void fake_nccl_reset(void) {
    pthread_mutex_lock(&mu);
    log_buf[0] = 0;
    next_id = 1; /* communicators are numbered from c1 again */
    pthread_mutex_unlock(&mu);
}

static ncclComm_t new_comm(int blocking) {
    ncclComm_t c = calloc(1, sizeof *c);
    c->id = __atomic_fetch_add(&next_id, 1, __ATOMIC_SEQ_CST);
    c->blocking = blocking;
    return c;
}

/* As NCCL's envConfigOverride and config defaults: NCCL_COMM_SPLIT_SHARE_RESOURCES overrides,
 * an unset splitShare is 0. */
static int split_share_of(const ncclConfig_t* config) {
    const char* env = getenv("NCCL_COMM_SPLIT_SHARE_RESOURCES");
    if (env) return atoi(env) == 1;
    return config && config->splitShare == 1;
}

/* As NCCL's envConfigOverride: NCCL_COMM_BLOCKING=0 or 1 overrides every config. */
static int blocking_of(const ncclConfig_t* config) {
    const char* env = getenv("NCCL_COMM_BLOCKING");
    if (env) {
        char* end = NULL;
        const long long v = strtoll(env, &end, 0);
        if (end != env && (v == 0 || v == 1)) return (int)v;
    }
    return !config || config->blocking == NCCL_CONFIG_UNDEF_INT ? 1 : config->blocking;
}

ncclResult_t ncclGetVersion(int* version) {
    const char* v = getenv("FAKE_NCCL_VERSION");
    *version = v ? atoi(v) : 22809;
    return ncclSuccess;
}

ncclResult_t ncclGetUniqueId(ncclUniqueId* id) {
    memset(id, 0x5a, sizeof *id);
    record("getuniqueid", 0, 0, 0, 0);
    return ncclSuccess;
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank,
                                    ncclConfig_t* config) {
    (void)id;
    const char* fail_rank = getenv("FAKE_NCCL_FAIL_RANK");
    if (scripted("init_fail") && (!fail_rank || atoi(fail_rank) == rank)) {
        record("init failed n=%d r=%d", nranks, rank, 0, 0);
        *comm = NULL;
        return ncclSystemError;
    }
    ncclComm_t c = new_comm(blocking_of(config));
    c->split_share = split_share_of(config);
    c->nranks = nranks;
    record("init c%d n=%d r=%d blocking=%d", c->id, nranks, rank, c->blocking);
    *comm = c;
    if (c->blocking) return ncclSuccess;
    c->polls_left = 2;
    return ncclInProgress;
}

ncclResult_t ncclCommInitRankScalable(ncclComm_t* comm, int nranks, int rank, int nid,
                                      ncclUniqueId* ids, ncclConfig_t* config) {
    (void)nid;
    return ncclCommInitRankConfig(comm, nranks, ids[0], rank, config);
}

ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
                           ncclConfig_t* config) {
    ncclComm_t child = new_comm(blocking_of(config));
    child->split_share = split_share_of(config);
    child->nranks = comm->nranks; /* the world's size: what the fake all-reduce sums over */
    record("split c%d color=%d key=%d", comm->id, color, key, 0);
    /* share: whether the child shares its parent's resources, decided as NCCL does by the
     * parent's splitShare (ncclCommInitChildComm), not by the child's config. */
    record("  -> c%d blocking=%d share=%d", child->id, child->blocking, comm->split_share, 0);
    *newcomm = NULL; /* as NCCL: set when the job completes */
    if (comm->blocking) {
        *newcomm = child;
        return ncclSuccess;
    }
    comm->child_out = newcomm;
    comm->child = child;
    comm->polls_left = scripted("split_hang") ? -1 : 2;
    return ncclInProgress;
}

static void complete_job(ncclComm_t comm) {
    if (comm->child_out) {
        *comm->child_out = comm->child;
        comm->child_out = NULL;
    }
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* state) {
    if (!comm) return ncclInvalidArgument;
    record("poll c%d", comm->id, 0, 0, 0);
    if (comm->polls_left == -1) {
        *state = ncclInProgress;
    } else if (comm->polls_left > 0) {
        --comm->polls_left;
        *state = ncclInProgress;
    } else {
        complete_job(comm);
        *state = ncclSuccess;
    }
    return ncclSuccess;
}

/* Blocks the calling thread inside a call on `comm` until some communicator is aborted (the
 * abort flag the communicators of one split share), then touches `comm` again, as NCCL does. */
static void block_until_abort(ncclComm_t comm) {
    pthread_mutex_lock(&mu);
    ++comm->in_call;
    const int seen = aborts;
    while (aborts == seen) pthread_cond_wait(&aborted_cv, &mu);
    --comm->in_call;
    pthread_mutex_unlock(&mu);
}

/* Releases every call blocked in block_until_abort, as an abort of another communicator would. */
void fake_nccl_unblock(void) {
    pthread_mutex_lock(&mu);
    ++aborts;
    pthread_cond_broadcast(&aborted_cv);
    pthread_mutex_unlock(&mu);
}

ncclResult_t ncclCommFinalize(ncclComm_t comm) {
    record("finalize c%d", comm->id, 0, 0, 0);
    if (comm->blocking && scripted("finalize_block")) {
        block_until_abort(comm);
        record("finalize c%d returned", comm->id, 0, 0, 0);
        return ncclSystemError;
    }
    if (comm->blocking) return ncclSuccess;
    comm->polls_left = scripted("finalize_hang") ? -1 : 2;
    return ncclInProgress;
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
    record("destroy c%d", comm->id, 0, 0, 0);
    if (scripted("destroy_fail")) return ncclInternalError;
    free(comm);
    return ncclSuccess;
}

ncclResult_t ncclAllReduce(const void* send, void* recv, size_t count, ncclDataType_t type,
                           ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
    (void)send;
    (void)stream;
    record("allreduce c%d count=%d type=%d op=%d", comm->id, (int)count, (int)type, (int)op);
    if (count != 1 || type != ncclInt64 || op != ncclSum) return ncclInvalidArgument;
    if (scripted("allreduce_block")) {
        block_until_abort(comm);
        record("allreduce c%d returned", comm->id, 0, 0, 0);
        return ncclSystemError;
    }
    if (scripted("allreduce_fail")) return ncclUnhandledCudaError;
    long long sum = (long long)comm->nranks * (comm->nranks + 1) / 2;
    if (scripted("allreduce_wrong")) sum -= 1;
    if (!scripted("allreduce_hang")) memcpy(recv, &sum, sizeof sum);
    return ncclSuccess;
}

ncclResult_t ncclCommAbort(ncclComm_t comm) {
    /* The abort is in the log before any call it releases can log its return. */
    pthread_mutex_lock(&mu);
    const int in_use = comm->in_call > 0;
    record_locked(in_use ? "abort c%d under a running call" : "abort c%d", comm->id, 0, 0, 0);
    ++aborts;
    pthread_cond_broadcast(&aborted_cv);
    pthread_mutex_unlock(&mu);
    if (in_use) return ncclSuccess;
    complete_job(comm); /* an aborted split job still hands out its (aborted) child */
    free(comm);
    return ncclSuccess;
}

const char* ncclGetErrorString(ncclResult_t r) {
    switch (r) {
        case ncclSuccess:
            return "no error";
        case ncclInternalError:
            return "internal error";
        case ncclSystemError:
            return "unhandled system error";
        case ncclInProgress:
            return "in progress";
        default:
            return "fake error";
    }
}

const char* ncclGetLastError(ncclComm_t comm) {
    (void)comm;
    return "fake last error";
}
