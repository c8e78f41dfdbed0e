// cpp_allreduce: the smallest useful NCCL trainer step with the C++ wrapper.
//
//     srun --ddp -N2 --ntasks-per-node=4 --gpus-per-node=4 ./cpp_allreduce
//
// slurm_ddp::Session does the whole bootstrap (identity, GPU, rendezvous, preflight, NCCL
// communicator); the program only allocates, all-reduces (world and node-local) and checks.
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include <slurm_ddp/bootstrap.hpp>

namespace {

bool check_cuda(cudaError_t e, const char* what) {
    if (e == cudaSuccess) return true;
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    return false;
}

// The communicator is non-blocking: wait until the enqueued collective is accepted, bounded.
bool wait_enqueued(ncclComm_t comm, ncclResult_t r, const char* what) {
    for (int i = 0; r == ncclInProgress && i < 100000; ++i) {
        std::this_thread::sleep_for(std::chrono::microseconds(100));
        ncclCommGetAsyncError(comm, &r);
    }
    if (r == ncclSuccess) return true;
    std::fprintf(stderr, "%s: %s\n", what, ncclGetErrorString(r));
    return false;
}

bool all_reduce_and_check(ncclComm_t comm, int ranks, int my_rank_in_comm, float* buf,
                          std::size_t n, cudaStream_t stream, const char* what) {
    std::vector<float> host(n, static_cast<float>(my_rank_in_comm + 1));
    if (!check_cuda(cudaMemcpy(buf, host.data(), n * sizeof(float), cudaMemcpyHostToDevice),
                    "cudaMemcpy")) {
        return false;
    }
    const auto t0 = std::chrono::steady_clock::now();
    if (!wait_enqueued(comm, ncclAllReduce(buf, buf, n, ncclFloat, ncclSum, comm, stream), what))
        return false;
    if (!check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize")) return false;
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    cudaMemcpy(host.data(), buf, n * sizeof(float), cudaMemcpyDeviceToHost);
    const float expect = static_cast<float>(ranks) * (ranks + 1) / 2.0f;
    for (float v : host) {
        if (v != expect) {
            std::fprintf(stderr, "%s: got %f, expected %f\n", what, v, expect);
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
        bool ok = all_reduce_and_check(s.nccl_comm(), s.world_size(), s.rank(), buf, n, stream,
                                       "world all-reduce");
        if (ok && s.nccl_local_comm()) {
            ok = all_reduce_and_check(s.nccl_local_comm(), s.local_world_size(), s.local_rank(),
                                      buf, n, stream, "node-local all-reduce");
        }
        cudaStreamDestroy(stream);
        cudaFree(buf);
        if (!ok) {
            s.abort("all-reduce check failed");
            return 1;
        }
        s.finalize();
    } catch (const slurm_ddp::Error& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    }
    return 0;
}
