// GPU selection for the NCCL layer: the CUDA runtime calls around choose_device.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <cctype>

#include "core/device_choice.hpp"
#include "nccl/nccl_layer.hpp"

namespace sddp::nccl {
namespace {

Error cuda_error(const std::string& call, cudaError_t e, const std::string& hint) {
    return make_error(Errc::io, call + " failed: " + cudaGetErrorName(e) + " (" +
                                    cudaGetErrorString(e) + ")" + hint);
}

}  // namespace

bool available() {
    return true;
}

Result<GpuSelection> select_gpu(const GpuRequest& req) {
    int count = 0;
    const cudaError_t ce = cudaGetDeviceCount(&count);
    if (ce == cudaErrorNoDevice) {
        count = 0;
    } else if (ce != cudaSuccess) {
        return cuda_error("cudaGetDeviceCount", ce,
                          ": the NVIDIA driver is missing, too old for this CUDA runtime, or "
                          "the GPUs are not accessible to this task");
    }
    DeviceChoiceInput in;
    in.ddp_device = req.ddp_device;
    in.local_rank = req.local_rank;
    in.locality_known = req.locality_known;
    in.device_count = count;
    in.visible_devices = req.visible_devices;
    SDDP_TRY(device, choose_device(in));
    if (const cudaError_t e = cudaSetDevice(device); e != cudaSuccess) {
        return cuda_error("cudaSetDevice(" + std::to_string(device) + ")", e,
                          ": the device exists but cannot be used (exclusive-process mode with "
                          "another process on it, or a GPU fault: check nvidia-smi)");
    }
    std::array<char, 64> bus{};
    if (const cudaError_t e =
            cudaDeviceGetPCIBusId(bus.data(), static_cast<int>(bus.size()), device);
        e != cudaSuccess) {
        return cuda_error("cudaDeviceGetPCIBusId(" + std::to_string(device) + ")", e, "");
    }
    GpuSelection s;
    s.device = device;
    s.pci_bus_id = bus.data();
    std::transform(s.pci_bus_id.begin(), s.pci_bus_id.end(), s.pci_bus_id.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

}  // namespace sddp::nccl
