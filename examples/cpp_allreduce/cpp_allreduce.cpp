// SPDX-License-Identifier: Apache-2.0
// cpp_allreduce: the smallest useful NCCL trainer step with the C++ wrapper.
//
//     srun --ddp -N2 --ntasks-per-node=4 --gpus-per-node=4 ./cpp_allreduce
//
// slurm_ddp::Session does the whole bootstrap (identity, GPU, rendezvous, preflight, NCCL
// communicator); the program only allocates, all-reduces (world and node-local) and checks.
// The communicators are blocking, so NCCL is used exactly as without slurm-ddp.
#include <cuda_runtime_api.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <vector>

#include <slurm_ddp/nccl.hpp>

namespace {

bool check_cuda(cudaError_t e, const char* what) {
    if (e == cudaSuccess) return true;
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    return false;
}

// Each rank contributes (rank % 4) + 1: small integers, so the sum is exact in float for any
// world below millions of ranks, whatever order NCCL adds them in.
float contribution(int rank) {
    return static_cast<float>(rank % 4 + 1);
}

bool all_reduce_and_check(ncclComm_t comm, int ranks, int my_rank_in_comm, float* buf,
                          std::size_t n, cudaStream_t stream, const char* what) {
    int count = -1, user_rank = -1;
    if (ncclCommCount(comm, &count) != ncclSuccess ||
        ncclCommUserRank(comm, &user_rank) != ncclSuccess || count != ranks ||
        user_rank != my_rank_in_comm) {
        std::fprintf(stderr, "%s: NCCL says rank %d of %d, slurm-ddp says %d of %d\n", what,
                     user_rank, count, my_rank_in_comm, ranks);
        return false;
    }
    std::vector<float> host(n, contribution(my_rank_in_comm));
    if (!check_cuda(cudaMemcpy(buf, host.data(), n * sizeof(float), cudaMemcpyHostToDevice),
                    "cudaMemcpy to the GPU")) {
        return false;
    }
    const auto t0 = std::chrono::steady_clock::now();
    if (const ncclResult_t r = ncclAllReduce(buf, buf, n, ncclFloat, ncclSum, comm, stream);
        r != ncclSuccess) {
        std::fprintf(stderr, "%s: ncclAllReduce: %s\n", what, ncclGetErrorString(r));
        return false;
    }
    if (!check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize")) return false;
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (!check_cuda(cudaMemcpy(host.data(), buf, n * sizeof(float), cudaMemcpyDeviceToHost),
                    "cudaMemcpy from the GPU")) {
        return false;
    }
    double expect = 0;
    for (int r = 0; r < ranks; ++r) expect += contribution(r);
    for (float v : host) {
        if (std::fabs(v - expect) > 1e-6 * expect) {
            std::fprintf(stderr, "%s: got %f, expected %.0f\n", what, v, expect);
            return false;
        }
    }
    if (my_rank_in_comm == 0) {
        std::printf("%s over %d ranks: %zu floats OK (sum %.0f) in %.2f ms\n", what, ranks, n,
                    expect, ms);
    }
    return true;
}

}  // namespace

int main() {
    try {
        slurm_ddp::Session s;  // NCCL on, timeout from SLURM_DDP_TIMEOUT or 300 s
        std::printf("rank %d of %d on %s: GPU %d, node %d of %d, local rank %d of %d\n", s.rank(),
                    s.world_size(), s.host().c_str(), s.cuda_device(), s.node_rank(), s.num_nodes(),
                    s.local_rank(), s.local_world_size());
        std::fflush(stdout);

        const std::size_t n = 1 << 24;  // 64 MiB of floats
        float* buf = nullptr;
        cudaStream_t stream = nullptr;
        if (!check_cuda(cudaMalloc(&buf, n * sizeof(float)), "cudaMalloc") ||
            !check_cuda(cudaStreamCreate(&stream), "cudaStreamCreate")) {
            s.abort("CUDA allocation failed");
            return 1;
        }
        bool ok = all_reduce_and_check(slurm_ddp::nccl_comm(s), s.world_size(), s.rank(), buf, n,
                                       stream, "world all-reduce");
        if (ok && slurm_ddp::nccl_local_comm(s)) {
            ok = all_reduce_and_check(slurm_ddp::nccl_local_comm(s), s.local_world_size(),
                                      s.local_rank(), buf, n, stream, "node-local all-reduce");
        }
        if (!ok) {
            // Abort first: a collective that failed or hung may still use the buffer and stream.
            s.abort("all-reduce check failed");
            cudaStreamDestroy(stream);
            cudaFree(buf);
            return 1;
        }
        cudaStreamDestroy(stream);
        cudaFree(buf);
        s.finalize();
    } catch (const slurm_ddp::Error& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    }
    return 0;
}
