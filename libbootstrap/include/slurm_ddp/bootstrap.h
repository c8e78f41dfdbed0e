// SPDX-License-Identifier: Apache-2.0
/* slurm_ddp/bootstrap.h: one call from "launched by Slurm (or torchrun, or mpirun)" to a ready
 * NCCL communicator, for C, C++ and foreign-function callers (ctypes, cffi).
 *
 * Why the shape: the handle is opaque, every value crosses the ABI as a plain int, size_t,
 * pointer or NUL-terminated string, and the one struct (sddp_options) is passed by pointer and
 * versioned by its first field, so bindings need no struct layout beyond eight plain fields.
 * No function throws, exits or waits without a bound.
 *
 *     sddp_handle* h = NULL;
 *     if (sddp_init(NULL, &h) != SDDP_OK) {
 *         fprintf(stderr, "%s\n", sddp_last_error());
 *         return 1;
 *     }
 *     ncclComm_t comm = (ncclComm_t)sddp_nccl_comm(h);
 *     ...
 *     sddp_finalize(h);
 *
 * Errors: every function returning int returns SDDP_OK (0) or one of the sddp_status codes, and
 * leaves a message in a thread-local buffer (sddp_last_error) that names what failed, on which
 * rank and host, and what to do. The message of a failed sddp_init is also kept there until the
 * thread's next failing call.
 *
 * Threads: one thread per communicator at a time. sddp_finalize and sddp_abort destroy the
 * communicators; call them only when no other thread is inside an NCCL call on them (a
 * collective, ncclCommFinalize, a split): NCCL frees a communicator on ncclCommAbort even while
 * another thread is still in a call on it. To stop a collective that hangs, abort from the
 * thread that would call it next, or leave the process to exit. The library keeps the rule
 * itself: a bounded call of its own that does not return in time is abandoned, and the thread
 * still inside NCCL aborts the communicator when the call returns.
 */
#ifndef SLURM_DDP_BOOTSTRAP_H
#define SLURM_DDP_BOOTSTRAP_H

#include <stddef.h>

#if defined(__GNUC__)
#define SDDP_API __attribute__((visibility("default")))
#else
#define SDDP_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define SDDP_VERSION_MAJOR 0
#define SDDP_VERSION_MINOR 1
#define SDDP_VERSION_PATCH 0

/* Status codes. Stable numbers: bindings may hard-code them. */
typedef enum sddp_status {
    SDDP_OK = 0,
    SDDP_ERR_INVALID_ARGUMENT = 1, /* a NULL handle, bad option, mismatched buffer sizes */
    SDDP_ERR_IDENTITY = 2,         /* RANK/WORLD_SIZE/... missing, malformed or inconsistent */
    SDDP_ERR_RENDEZVOUS = 3,       /* transport failure: connect, auth, protocol, peer lost */
    SDDP_ERR_TIMEOUT = 4,          /* a bounded wait ran out (rendezvous or NCCL init) */
    SDDP_ERR_PREFLIGHT = 5,        /* ranks disagree: shared GPU, world size, another step */
    SDDP_ERR_CUDA = 6,             /* no usable device, invalid ordinal, CUDA runtime error */
    SDDP_ERR_NCCL = 7,             /* NCCL init, split, finalize failed */
    SDDP_ERR_UNSUPPORTED = 8,      /* not in this build (NCCL) or not on this machine (PMI2/x) */
    SDDP_ERR_INTERNAL = 9
} sddp_status;

/* How ranks exchange bytes before NCCL exists. */
typedef enum sddp_transport {
    SDDP_TRANSPORT_AUTO = 0, /* SLURM_DDP_TRANSPORT if set, else PMI2 under srun --mpi=pmi2, PMIx
                                under srun --mpi=pmix, else TCP */
    SDDP_TRANSPORT_TCP = 1,  /* rank 0 serves at MASTER_ADDR:MASTER_PORT */
    SDDP_TRANSPORT_PMI2 = 2, /* Slurm's PMI2 key-value space (srun --mpi=pmi2) */
    SDDP_TRANSPORT_PMIX = 3  /* the PMIx key-value space (srun --mpi=pmix; libpmix at run time) */
} sddp_transport;

#define SDDP_OPTIONS_VERSION 1

/* Options. Fill with sddp_options_init, then change fields; NULL options mean the defaults. */
typedef struct sddp_options {
    int version;             /* SDDP_OPTIONS_VERSION (set by sddp_options_init) */
    int no_nccl;             /* 1: identity + rendezvous only; no CUDA, no NCCL */
    int transport;           /* sddp_transport */
    long long timeout_ms;    /* every bounded wait; 0 = SLURM_DDP_TIMEOUT seconds, else 300 s */
    const char* master_addr; /* NULL = MASTER_ADDR from the environment (TCP only) */
    int master_port;         /* 0 = MASTER_PORT from the environment (TCP only) */
    int no_local_comm;       /* 1: skip the node-local communicator (saves one ncclCommSplit) */
    int nccl_unique_ids;     /* >1: ncclCommInitRankScalable with that many ids (large worlds);
                                0 or 1: ncclCommInitRankConfig with one id */
    /* UNSAFE. 1: let the TCP rendezvous run without SLURM_DDP_SECRET, so that any process that
     * reaches MASTER_PORT can join as any rank. Only for launches without Slurm on a trusted
     * network; SLURM_DDP_ALLOW_UNAUTHENTICATED=1 does the same. Without either, a missing secret
     * is SDDP_ERR_RENDEZVOUS naming the variable. (Takes former tail padding: same size.) */
    int allow_unauthenticated;
} sddp_options;

typedef struct sddp_handle sddp_handle;

SDDP_API int sddp_options_init(sddp_options* opts);

/* Read the identity, pick the GPU, run the rendezvous and the preflight check, create the NCCL
 * communicator (and the node-local one). On success *out is a handle to pass to sddp_finalize;
 * on failure *out is NULL and sddp_last_error() says why. */
SDDP_API int sddp_init(const sddp_options* opts, sddp_handle** out);

/* Destroy the communicators (ncclCommFinalize + ncclCommDestroy, bounded by the timeout; abort
 * if that runs out), close the rendezvous and free the handle. NULL is accepted. */
SDDP_API int sddp_finalize(sddp_handle* h);

/* Error path: ncclCommAbort on the communicators, tell the rendezvous peers `reason` (may be
 * NULL), free the handle. Never blocks past the timeout. NULL is accepted. Not while another
 * thread is inside an NCCL call on the communicators (see "Threads" above). */
SDDP_API int sddp_abort(sddp_handle* h, const char* reason);

/* Identity. Return -1 on a NULL handle. */
SDDP_API int sddp_rank(const sddp_handle* h);
SDDP_API int sddp_world_size(const sddp_handle* h);
SDDP_API int sddp_local_rank(const sddp_handle* h);
SDDP_API int sddp_local_world_size(const sddp_handle* h);
SDDP_API int sddp_node_rank(const sddp_handle* h); /* node index, 0..num_nodes-1 */
SDDP_API int sddp_num_nodes(const sddp_handle* h);
SDDP_API int sddp_cuda_device(const sddp_handle* h); /* -1 without NCCL */

/* NCCL communicators as void* (cast to ncclComm_t). NULL with no_nccl or on a NULL handle. */
SDDP_API void* sddp_nccl_comm(const sddp_handle* h);
SDDP_API void* sddp_nccl_local_comm(const sddp_handle* h);

/* "tcp", "pmi2", "pmix" or "self" (world size 1); "" on a NULL handle. Owned by the handle. */
SDDP_API const char* sddp_transport_name(const sddp_handle* h);
/* Where the identity came from: "ddp", "slurm", "mpi" or "single". */
SDDP_API const char* sddp_identity_source(const sddp_handle* h);
SDDP_API const char* sddp_host(const sddp_handle* h);

/* Small collectives over the rendezvous transport (not NCCL): for ids, host names, flags.
 * Every rank must call them in the same order with the same len. Bounded by the timeout. */
/* buf: len bytes; root's bytes replace the others'. */
SDDP_API int sddp_broadcast(sddp_handle* h, void* buf, size_t len, int root);
/* out: len * world_size bytes, rank r's contribution at out + r * len. */
SDDP_API int sddp_allgather(sddp_handle* h, const void* mine, size_t len, void* out);
SDDP_API int sddp_barrier(sddp_handle* h);

/* The message of this thread's last failure ("" if none); valid until the thread's next call. */
SDDP_API const char* sddp_last_error(void);
SDDP_API int sddp_last_error_code(void);
SDDP_API const char* sddp_status_name(int status); /* "SDDP_ERR_TIMEOUT", ... */

SDDP_API const char* sddp_version(void); /* "0.1.0" */
/* 1 if this build has the NCCL layer and NCCL and the CUDA runtime load on this node (they are
 * loaded at run time, by SONAME: libnccl.so.2, libcudart.so.N); 0 otherwise, with the reason in
 * sddp_last_error() only after a failed sddp_init. */
SDDP_API int sddp_have_nccl(void);
/* ncclGetVersion() of the NCCL this process loaded (22809 for 2.28.9); 0 when none loads. */
SDDP_API int sddp_nccl_version(void);

#ifdef __cplusplus
}
#endif

#endif /* SLURM_DDP_BOOTSTRAP_H */
