// SPDX-License-Identifier: Apache-2.0
// Which CUDA device a rank uses. Pure: facts in (the count comes from cudaGetDeviceCount, the
// variables from the task's environment), a choice or an error out. No getenv, no CUDA.
//
// SLURM_DDP_DEVICE (set by srun --ddp where it binds GPUs) wins: it is an index into this
// task's CUDA_VISIBLE_DEVICES. Without it, the device is derived with the plugin's own binding
// rules (core/gpu/gpu_binding.hpp, policy local) from Slurm's variables, so plain srun, srun --ddp
// and torchrun agree: under --gpus-per-task=1 every task uses its one visible GPU (index 0), not
// index LOCAL_RANK. Where Slurm set no GPU variables (torchrun, a user's CUDA_VISIBLE_DEVICES),
// LOCAL_RANK indexes the visible devices, as PyTorch's cuda:LOCAL_RANK does. When that index
// does not exist the error explains the CUDA "invalid device ordinal" it would have caused.
#pragma once

#include <optional>
#include <string>

#include "core/base/result.hpp"
#include "core/gpu/gpu_binding.hpp"

namespace sddp {

struct DeviceChoiceInput {
    std::optional<int> ddp_device;  // SLURM_DDP_DEVICE
    int local_rank = 0;
    int local_world_size = 1;
    bool locality_known = true;  // false: local_rank is 0 by default, not from the launcher
    int device_count = 0;
    // The task's own values (task_* fields and gpus_on_node); task_visible also for messages.
    SlurmGpuEnv slurm;
};

Result<int> choose_device(const DeviceChoiceInput& in);

// The input every caller builds the same way (the library before cudaSetDevice, `slurm-ddp
// check` without CUDA): the task's own Slurm variables from `env`, no step-level lists.
DeviceChoiceInput device_choice_input(std::optional<int> ddp_device, int local_rank,
                                      int local_world_size, bool locality_known,
                                      const EnvLookup& env);

}  // namespace sddp
