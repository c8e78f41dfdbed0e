// SPDX-License-Identifier: Apache-2.0
// GPU selection for the NCCL layer: the CUDA runtime calls around core's choose_device.
#include <algorithm>
#include <array>
#include <cctype>

#include "nccl/nccl_layer.hpp"
#include "nccl/nccl_library.hpp"

namespace sddp::nccl {
namespace {

Error cuda_error(const CudaApi& cuda, const std::string& call, cudaError_t e,
                 const std::string& hint) {
    return make_error(Errc::io, call + " failed: " + cuda.GetErrorName(e) + " (" +
                                    cuda.GetErrorString(e) + ")" + hint);
}

// What to check for a failing cudaGetDeviceCount, by error.
std::string device_count_hint(cudaError_t e) {
    switch (e) {
        case cudaErrorSystemNotReady:
            return ": the GPUs are not ready: on NVSwitch systems the fabric manager "
                   "(nvidia-fabricmanager) is not running or has not finished; check "
                   "systemctl status nvidia-fabricmanager and nvidia-smi -q";
        case cudaErrorInsufficientDriver:
            return ": the NVIDIA driver is not installed, or older than this CUDA runtime "
                   "needs; install or upgrade it, or use a runtime matching it";
        default:
            return ": the NVIDIA driver is missing, too old for this CUDA runtime, or the GPUs "
                   "are not accessible to this task";
    }
}

}  // namespace

bool built() {
    return true;
}

Status load() {
    SDDP_TRY(n, nccl_api());
    (void)n;
    SDDP_TRY(c, cuda_api());
    (void)c;
    return ok_status();
}

int version() {
    auto n = nccl_api();
    return n ? (*n)->version : 0;
}

Result<GpuSelection> select_gpu(DeviceChoiceInput req) {
    SDDP_TRY(cuda_ptr, cuda_api());
    const CudaApi& cuda = *cuda_ptr;
    int count = 0;
    const cudaError_t ce = cuda.GetDeviceCount(&count);
    if (ce == cudaErrorNoDevice) {
        count = 0;
    } else if (ce != cudaSuccess) {
        return cuda_error(cuda, "cudaGetDeviceCount", ce, device_count_hint(ce));
    }
    req.device_count = count;
    SDDP_TRY(device, choose_device(req));
    if (const cudaError_t e = cuda.SetDevice(device); e != cudaSuccess) {
        return cuda_error(cuda, "cudaSetDevice(" + std::to_string(device) + ")", e,
                          ": the device exists but cannot be used (exclusive-process mode with "
                          "another process on it, or a GPU fault: check nvidia-smi)");
    }
    std::array<char, 64> bus{};
    if (const cudaError_t e =
            cuda.DeviceGetPCIBusId(bus.data(), static_cast<int>(bus.size()), device);
        e != cudaSuccess) {
        return cuda_error(cuda, "cudaDeviceGetPCIBusId(" + std::to_string(device) + ")", e, "");
    }
    GpuSelection s;
    s.device = device;
    s.pci_bus_id = bus.data();
    std::transform(s.pci_bus_id.begin(), s.pci_bus_id.end(), s.pci_bus_id.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

}  // namespace sddp::nccl
