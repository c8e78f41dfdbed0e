// A real one-rank NCCL communicator from sddp_init, checked with an all-reduce.
// Exits 77 (ctest: skipped) when no GPU is visible.
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <unistd.h>

#include <cstdio>
#include <vector>

#include "slurm_ddp/bootstrap.hpp"

int main() {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        std::printf("no CUDA device visible: skipped\n");
        return 77;
    }
    try {
        slurm_ddp::Options o;
        o.timeout_ms = 60000;
        slurm_ddp::Session s(o);  // world of one: no variables needed
        if (s.world_size() != 1 || s.rank() != 0 || s.cuda_device() < 0 || !s.nccl_comm() ||
            !s.nccl_local_comm()) {
            std::fprintf(stderr, "unexpected handle state\n");
            return 1;
        }
        const int n = 1024;
        float* buf = nullptr;
        if (cudaMalloc(&buf, n * sizeof(float)) != cudaSuccess) return 1;
        std::vector<float> host(n, 2.5f);
        cudaMemcpy(buf, host.data(), n * sizeof(float), cudaMemcpyHostToDevice);
        cudaStream_t stream;
        cudaStreamCreate(&stream);
        ncclResult_t r = ncclAllReduce(buf, buf, n, ncclFloat, ncclSum, s.nccl_comm(), stream);
        if (r != ncclSuccess && r != ncclInProgress) {
            std::fprintf(stderr, "ncclAllReduce: %s\n", ncclGetErrorString(r));
            return 1;
        }
        // Non-blocking communicator: the enqueue may still be in progress.
        ncclResult_t state = ncclInProgress;
        for (int i = 0; i < 60000 && state == ncclInProgress; ++i) {  // at most ~60 s
            ncclCommGetAsyncError(s.nccl_comm(), &state);
            if (state == ncclInProgress) cudaStreamQuery(stream), usleep(1000);
        }
        if (state != ncclSuccess || cudaStreamSynchronize(stream) != cudaSuccess) return 1;
        cudaMemcpy(host.data(), buf, n * sizeof(float), cudaMemcpyDeviceToHost);
        for (float v : host) {
            if (v != 2.5f) {
                std::fprintf(stderr, "all-reduce of one rank changed the data: %f\n", v);
                return 1;
            }
        }
        cudaFree(buf);
        cudaStreamDestroy(stream);
        s.finalize();
        std::printf("one-rank NCCL all-reduce OK on device %d\n", 0);
    } catch (const slurm_ddp::Error& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    }
    return 0;
}
