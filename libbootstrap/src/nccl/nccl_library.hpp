// SPDX-License-Identifier: Apache-2.0
// The NCCL and CUDA runtime entry points the layer uses, loaded at run time.
//
// Why not link them: a library linked to libnccl.so.2 and libcudart does not load on a node
// without CUDA (even for callers that never ask for NCCL), and one linked with -z now fails with
// an undefined symbol in a process that already loaded an older libnccl.so.2 (a PyTorch
// wheel's). Loading by SONAME at the first sddp_init that wants NCCL lets one build serve CPU and
// GPU nodes, and turns an old or missing NCCL into a message that names it. dlopen of a SONAME
// the process already holds returns that copy, so the library and the program share one NCCL.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <string>
#include <vector>

#include "core/base/result.hpp"

namespace sddp::nccl {

// ncclCommSplit with splitShare and a child config of its own (blocking) needs NCCL 2.18.
inline constexpr int kMinNcclVersion = 21800;
// ncclCommInitRankScalable appeared in NCCL 2.23.
inline constexpr int kScalableNcclVersion = 22300;

struct NcclApi {
    ncclResult_t (*GetVersion)(int*) = nullptr;
    ncclResult_t (*GetUniqueId)(ncclUniqueId*) = nullptr;
    ncclResult_t (*CommInitRankConfig)(ncclComm_t*, int, ncclUniqueId, int,
                                       ncclConfig_t*) = nullptr;
    // nullptr before NCCL 2.23.
    ncclResult_t (*CommInitRankScalable)(ncclComm_t*, int, int, int, ncclUniqueId*,
                                         ncclConfig_t*) = nullptr;
    ncclResult_t (*CommSplit)(ncclComm_t, int, int, ncclComm_t*, ncclConfig_t*) = nullptr;
    ncclResult_t (*CommGetAsyncError)(ncclComm_t, ncclResult_t*) = nullptr;
    ncclResult_t (*CommFinalize)(ncclComm_t) = nullptr;
    ncclResult_t (*CommDestroy)(ncclComm_t) = nullptr;
    ncclResult_t (*CommAbort)(ncclComm_t) = nullptr;
    ncclResult_t (*AllReduce)(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t,
                              cudaStream_t) = nullptr;
    const char* (*GetErrorString)(ncclResult_t) = nullptr;
    const char* (*GetLastError)(ncclComm_t) = nullptr;
    int version = 0;   // ncclGetVersion's code, 22809 for 2.28.9
    std::string path;  // the file the loader picked
};

struct CudaApi {
    cudaError_t (*GetDeviceCount)(int*) = nullptr;
    cudaError_t (*SetDevice)(int) = nullptr;
    cudaError_t (*DeviceGetPCIBusId)(char*, int, int) = nullptr;
    // The one-element all-reduce of `slurm-ddp check --nccl` (nccl_selftest.cpp).
    cudaError_t (*Malloc)(void**, size_t) = nullptr;
    cudaError_t (*Free)(void*) = nullptr;
    cudaError_t (*Memcpy)(void*, const void*, size_t, cudaMemcpyKind) = nullptr;
    cudaError_t (*StreamCreate)(cudaStream_t*) = nullptr;
    cudaError_t (*StreamDestroy)(cudaStream_t) = nullptr;
    cudaError_t (*StreamQuery)(cudaStream_t) = nullptr;
    const char* (*GetErrorName)(cudaError_t) = nullptr;
    const char* (*GetErrorString)(cudaError_t) = nullptr;
    cudaError_t not_ready = cudaErrorNotReady;  // StreamQuery's "still running" (HIP's differs)
    std::string path;
};

// Loaded once per process (later calls return the same answer): the copy the process holds,
// else SLURM_DDP_NCCL_LIBRARY's, else the first of os/library_search.hpp's candidates
// (LD_LIBRARY_PATH, the Python environment's nvidia-nccl wheel, the loader's search).
// Errc::unsupported with a message naming the files tried and the fix when it is missing, lacks
// an entry point or is older than kMinNcclVersion.
Result<const NcclApi*> nccl_api();
Result<const CudaApi*> cuda_api();

// Pure: the CUDA runtime SONAMEs to try, the one of the CUDA this was built with first.
std::vector<std::string> cudart_sonames(int built_major);
// Not cached (cuda_api() is): the first of `sonames` the process already holds (RTLD_NOLOAD);
// else, each looked for as os/library_search.hpp says (the wheels' nvidia/cuda_runtime/lib and
// nvidia/cuNN/lib), the first that loads and whose cudaGetDeviceCount does not answer
// cudaErrorInsufficientDriver. The error names each runtime tried and why it was passed over.
// `prefix` "hip" binds the HIP runtime's entry points (hipGetDeviceCount, ...) for RCCL.
Result<CudaApi> load_cuda_runtime(const std::vector<std::string>& sonames,
                                  const std::string& prefix = "cuda");

// Pure: "2.28.9" from 22809 (and from the pre-2.9 form 2804 -> "2.8.4").
std::string version_text(int code);
// Pure: the verdict on a loaded NCCL's version.
Status check_nccl_version(int code, const std::string& path);

}  // namespace sddp::nccl
