// SPDX-License-Identifier: Apache-2.0
// NCCL communicators from sddp_init on a real GPU: world and node-local all-reduce with
// ncclCommCount/ncclCommUserRank checked against the identity, back-to-back collectives without
// polling (the communicators are blocking), and, with --repeat N, N init/finalize cycles in one
// process with the thread count and free GPU memory compared before and after.
//
//     test_gpu_allreduce [--repeat N] [--no-local]      (one rank, or under srun / torchrun)
//     test_gpu_allreduce --die R:before|during|after     (several ranks)
//
// --die: rank R kills itself (SIGKILL) before sddp_init, 20 ms into it, or right after it; every
// other rank must get an error back (from sddp_init, or from a barrier after init) and prints
// "SURVIVOR rank r: error after S s: ..." and exits 3; the caller bounds the time.
//
// Exits 77 (ctest: skipped) only when CUDA reports no device; any other CUDA error is a failure,
// so a broken driver on a GPU machine is not mistaken for a machine without GPUs.
#include <cuda_runtime_api.h>

#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "slurm_ddp/nccl.hpp"

namespace {

int thread_count() {
    int n = 0;
    if (DIR* d = opendir("/proc/self/task")) {
        while (dirent* e = readdir(d)) n += e->d_name[0] != '.';
        closedir(d);
    }
    return n;
}

#define EXPECT(cond, ...)                                                     \
    do {                                                                      \
        if (!(cond)) {                                                        \
            std::fprintf(stderr, "rank %d: FAIL: %s: ", rank_for_log, #cond); \
            std::fprintf(stderr, __VA_ARGS__);                                \
            std::fprintf(stderr, "\n");                                       \
            return false;                                                     \
        }                                                                     \
    } while (0)

int rank_for_log = -1;

// Two all-reduces enqueued back to back on one stream, one sync: each rank adds rank+1, then
// the result is reduced again (sum * ranks).
bool reduce_twice(ncclComm_t comm, int ranks, int rank, const char* what) {
    int count = -1, user_rank = -1;
    EXPECT(ncclCommCount(comm, &count) == ncclSuccess && count == ranks, "%s: count %d vs %d", what,
           count, ranks);
    EXPECT(ncclCommUserRank(comm, &user_rank) == ncclSuccess && user_rank == rank,
           "%s: user rank %d vs %d", what, user_rank, rank);
    const int n = 1 << 20;
    float* buf = nullptr;
    cudaStream_t stream = nullptr;
    EXPECT(cudaMalloc(&buf, n * sizeof(float)) == cudaSuccess, "cudaMalloc");
    EXPECT(cudaStreamCreate(&stream) == cudaSuccess, "cudaStreamCreate");
    std::vector<float> host(n, static_cast<float>(rank % 4 + 1));
    EXPECT(cudaMemcpy(buf, host.data(), n * sizeof(float), cudaMemcpyHostToDevice) == cudaSuccess,
           "cudaMemcpy H2D");
    ncclResult_t r1 = ncclAllReduce(buf, buf, n, ncclFloat, ncclSum, comm, stream);
    ncclResult_t r2 = ncclAllReduce(buf, buf, n, ncclFloat, ncclSum, comm, stream);
    EXPECT(r1 == ncclSuccess && r2 == ncclSuccess,
           "%s: ncclAllReduce: %s / %s (a blocking "
           "communicator never returns ncclInProgress)",
           what, ncclGetErrorString(r1), ncclGetErrorString(r2));
    EXPECT(cudaStreamSynchronize(stream) == cudaSuccess, "cudaStreamSynchronize");
    EXPECT(cudaMemcpy(host.data(), buf, n * sizeof(float), cudaMemcpyDeviceToHost) == cudaSuccess,
           "cudaMemcpy D2H");
    double sum = 0;
    for (int r = 0; r < ranks; ++r) sum += r % 4 + 1;
    const double expect = sum * ranks;
    for (int i = 0; i < n; i += 4099) {
        EXPECT(std::fabs(host[i] - expect) <= 1e-6 * expect, "%s: element %d is %f, expected %.0f",
               what, i, host[i], expect);
    }
    cudaStreamDestroy(stream);
    cudaFree(buf);
    return true;
}

bool one_session(bool local, bool verbose) {
    slurm_ddp::Options o;
    o.timeout_ms = 60000;
    o.local_comm = local;
    slurm_ddp::Session s(o);
    rank_for_log = s.rank();
    EXPECT(s.cuda_device() >= 0, "no device chosen");
    int dev = -1;
    EXPECT(cudaGetDevice(&dev) == cudaSuccess && dev == s.cuda_device(), "current device %d vs %d",
           dev, s.cuda_device());
    EXPECT(slurm_ddp::nccl_comm(s) != nullptr, "no world communicator");
    EXPECT((slurm_ddp::nccl_local_comm(s) != nullptr) == local, "local communicator %s",
           local ? "missing" : "present though not asked for");
    if (!reduce_twice(slurm_ddp::nccl_comm(s), s.world_size(), s.rank(), "world")) {
        s.abort("world all-reduce failed");
        return false;
    }
    if (local && !reduce_twice(slurm_ddp::nccl_local_comm(s), s.local_world_size(), s.local_rank(),
                               "node-local")) {
        s.abort("node-local all-reduce failed");
        return false;
    }
    if (verbose) {
        std::printf("rank %d of %d: NCCL all-reduce OK on device %d (world%s)\n", s.rank(),
                    s.world_size(), s.cuda_device(), local ? " and node-local" : "");
    }
    s.finalize();
    return true;
}

int env_rank() {
    for (const char* v : {"RANK", "SLURM_PROCID"}) {
        if (const char* s = std::getenv(v)) return std::atoi(s);
    }
    return 0;
}

int die_scenario(int victim, const std::string& when) {
    const int me = env_rank();
    if (me == victim && when == "before") raise(SIGKILL);
    if (me == victim && when == "during") {
        std::thread([] {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            raise(SIGKILL);
        }).detach();
    }
    const auto t0 = std::chrono::steady_clock::now();
    const auto took = [&] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    };
    try {
        slurm_ddp::Session s;              // timeout from SLURM_DDP_TIMEOUT
        if (me == victim) raise(SIGKILL);  // "after", or "during" when init beat the timer
        try {
            s.barrier();
        } catch (const slurm_ddp::Error& e) {
            std::printf("SURVIVOR rank %d: error after %.2f s: %s\n", me, took(), e.what());
            s.abort("a peer died");
            return 3;
        }
        std::printf("rank %d: the barrier passed although rank %d was killed\n", me, victim);
        return 1;
    } catch (const slurm_ddp::Error& e) {
        std::printf("SURVIVOR rank %d: error after %.2f s: %s\n", me, took(), e.what());
        return 3;
    }
}

}  // namespace

int main(int argc, char** argv) {
    int repeat = 1;
    bool local = true;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--repeat") == 0 && i + 1 < argc) {
            repeat = std::atoi(argv[++i]);
        } else if (std::strcmp(argv[i], "--no-local") == 0) {
            local = false;
        } else if (std::strcmp(argv[i], "--die") == 0 && i + 1 < argc) {
            const std::string spec = argv[++i];
            const auto colon = spec.find(':');
            if (colon == std::string::npos) return 2;
            return die_scenario(std::atoi(spec.c_str()), spec.substr(colon + 1));
        } else {
            std::fprintf(stderr,
                         "usage: %s [--repeat N] [--no-local] | --die R:before|during|after\n",
                         argv[0]);
            return 2;
        }
    }
    int count = 0;
    const cudaError_t ce = cudaGetDeviceCount(&count);
    if (ce == cudaErrorNoDevice || (ce == cudaSuccess && count == 0)) {
        std::printf("no CUDA device visible: skipped\n");
        return 77;
    }
    // No NVIDIA kernel driver at all (a build machine with the CUDA toolkit only): the runtime
    // says "insufficient driver", but there is no GPU here to fail on.
    if (ce == cudaErrorInsufficientDriver && access("/proc/driver/nvidia/version", F_OK) != 0) {
        std::printf("no NVIDIA driver loaded (/proc/driver/nvidia/version absent): skipped\n");
        return 77;
    }
    if (ce != cudaSuccess) {
        std::fprintf(stderr,
                     "FAIL: cudaGetDeviceCount: %s (%s): a driver or device problem, not "
                     "a machine without GPUs\n",
                     cudaGetErrorName(ce), cudaGetErrorString(ce));
        return 1;
    }
    try {
        if (!one_session(local, true)) return 1;  // warms up CUDA and NCCL
        if (repeat > 1) {
            size_t free0 = 0, free1 = 0, total = 0;
            cudaMemGetInfo(&free0, &total);
            const int threads0 = thread_count();
            for (int i = 1; i < repeat; ++i) {
                if (!one_session(local, false)) {
                    std::fprintf(stderr, "FAIL: cycle %d\n", i);
                    return 1;
                }
            }
            cudaMemGetInfo(&free1, &total);
            const int threads1 = thread_count();
            const long long lost_mib =
                (static_cast<long long>(free0) - static_cast<long long>(free1)) >> 20;
            std::printf(
                "%d init/finalize cycles: threads %d -> %d, free GPU memory %lld MiB "
                "lower\n",
                repeat, threads0, threads1, lost_mib);
            if (threads1 > threads0 + 2 || lost_mib > 64) {
                std::fprintf(stderr, "FAIL: threads or GPU memory leaked across cycles\n");
                return 1;
            }
        }
    } catch (const slurm_ddp::Error& e) {
        std::fprintf(stderr, "FAIL: %s\n", e.what());
        return 1;
    }
    return 0;
}
