// Which CUDA device a rank uses. Pure: the count comes from the caller (cudaGetDeviceCount).
//
// SLURM_DDP_DEVICE (set by srun --ddp where it binds GPUs) wins: it is an index into this
// task's CUDA_VISIBLE_DEVICES. Otherwise LOCAL_RANK indexes the visible devices, as PyTorch's
// cuda:LOCAL_RANK does. When that index does not exist the error explains the CUDA
// "invalid device ordinal" it would have caused, and how to get one GPU per task.
#pragma once

#include <optional>
#include <string>

#include "core/result.hpp"

namespace sddp {

struct DeviceChoiceInput {
    std::optional<int> ddp_device;  // SLURM_DDP_DEVICE
    int local_rank = 0;
    bool locality_known = true;  // false: local_rank is 0 by default, not from the launcher
    int device_count = 0;
    std::optional<std::string> visible_devices;  // CUDA_VISIBLE_DEVICES, for messages
};

Result<int> choose_device(const DeviceChoiceInput& in);

}  // namespace sddp
