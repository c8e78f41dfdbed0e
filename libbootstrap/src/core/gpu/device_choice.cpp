// SPDX-License-Identifier: Apache-2.0
#include "core/gpu/device_choice.hpp"

#include <algorithm>
#include <vector>

#include "core/base/numbers.hpp"
#include "core/contract/contract.hpp"

namespace sddp {
namespace {

std::string visible_text(const DeviceChoiceInput& in) {
    const std::string& var = in.slurm.visible_var;
    return in.slurm.task_visible ? var + "=" + quote_value(*in.slurm.task_visible) : var + " unset";
}

bool lists_mig(const DeviceChoiceInput& in) {
    return in.slurm.task_visible && in.slurm.task_visible->find("MIG-") != std::string::npos;
}

std::string count_text(int n) {
    return std::to_string(n) + (n == 1 ? " CUDA device is" : " CUDA devices are");
}

std::string trim(std::string s) {
    const auto sp = [](unsigned char c) { return c == ' ' || c == '\t'; };
    while (!s.empty() && sp(static_cast<unsigned char>(s.back()))) s.pop_back();
    std::size_t i = 0;
    while (i < s.size() && sp(static_cast<unsigned char>(s[i]))) ++i;
    return s.substr(i);
}

std::vector<std::string> entries(const std::string& list) {
    std::vector<std::string> out;
    std::size_t start = 0;
    for (;;) {
        const std::size_t comma = list.find(',', start);
        out.push_back(trim(list.substr(start, comma - start)));
        if (comma == std::string::npos) return out;
        start = comma + 1;
    }
}

// The device index the plugin's binding (policy local) gives this task within its current
// CUDA_VISIBLE_DEVICES; nullopt when Slurm bound no GPUs (then LOCAL_RANK decides).
Result<std::optional<int>> index_from_binding(const DeviceChoiceInput& in) {
    GpuBindingInput b;
    b.policy = GpuBindPolicy::local;
    b.local_rank = in.local_rank;
    b.local_world_size = std::max(in.local_world_size, in.local_rank + 1);
    b.slurm = in.slurm;
    b.slurm.step_visible.reset();  // the step's list is the plugin's view, not the task's
    b.slurm.step_gpus.reset();
    SDDP_TRY(binding, bind_gpus(b));
    if (!binding.changed) return std::optional<int>();
    const std::optional<std::string>& list =
        in.slurm.task_visible ? in.slurm.task_visible : in.slurm.task_ordinal;
    if (!list) return std::optional<int>();
    const std::vector<std::string> mine = entries(*list);
    const auto at = std::find(mine.begin(), mine.end(), binding.own);
    if (at == mine.end()) return std::optional<int>();
    return std::optional<int>(static_cast<int>(at - mine.begin()));
}

}  // namespace

Result<int> choose_device(const DeviceChoiceInput& in) {
    if (in.device_count <= 0) {
        return make_error(Errc::missing_input,
                          "no CUDA device is visible to this task (" + visible_text(in) +
                              "); request GPUs (--gres=gpu:N, --gpus-per-task=1) or initialise "
                              "without NCCL (no_nccl) for CPU-only work");
    }
    if (in.ddp_device) {
        if (*in.ddp_device >= 0 && *in.ddp_device < in.device_count) return *in.ddp_device;
        return make_error(Errc::invalid_input,
                          std::string(contract::kDeviceVar) + "=" + std::to_string(*in.ddp_device) +
                              " but only " + count_text(in.device_count) + " visible (" +
                              visible_text(in) +
                              "): CUDA_VISIBLE_DEVICES was changed after srun --ddp bound the "
                              "GPUs; do not change it inside the job step");
    }
    auto bound = index_from_binding(in);
    if (!bound) {
        // More tasks on the node than GPUs: the binding's message names both counts.
        return make_error(Errc::invalid_input, bound.error().message);
    }
    if (*bound) {
        if (**bound < in.device_count) return **bound;
        return make_error(Errc::invalid_input,
                          "Slurm gave this task GPU index " + std::to_string(**bound) +
                              " but only " + count_text(in.device_count) + " visible (" +
                              visible_text(in) +
                              "): the GPUs Slurm lists are not all usable by this task (device "
                              "cgroup, or CUDA_VISIBLE_DEVICES changed inside the step)");
    }
    if (in.local_rank < in.device_count) return in.local_rank;
    if (lists_mig(in)) {
        return make_error(
            Errc::invalid_input,
            "LOCAL_RANK=" + std::to_string(in.local_rank) +
                " but CUDA shows a process only the "
                "first MIG instance of " +
                visible_text(in) + ", so cudaSetDevice(" + std::to_string(in.local_rank) +
                ") would fail with \"invalid device ordinal\": use srun --ddp (it gives each task "
                "its own instance) or --gpus-per-task=1");
    }
    return make_error(
        Errc::invalid_input,
        "LOCAL_RANK=" + std::to_string(in.local_rank) + " but only " + count_text(in.device_count) +
            " visible (" + visible_text(in) + "), so cudaSetDevice(" +
            std::to_string(in.local_rank) +
            ") would fail with \"invalid device ordinal\": this node runs more tasks than it "
            "gives each task GPUs. Use srun --ddp (it binds one GPU per task), "
            "--gpus-per-task=1, or --ntasks-per-node <= GPUs per node");
}

DeviceChoiceInput device_choice_input(std::optional<int> ddp_device, int local_rank,
                                      int local_world_size, bool locality_known,
                                      const EnvLookup& env) {
    DeviceChoiceInput in;
    in.ddp_device = ddp_device;
    in.local_rank = local_rank;
    in.local_world_size = local_world_size;
    in.locality_known = locality_known;
    in.slurm = read_slurm_gpu_env(env, EnvLookup());
    return in;
}

}  // namespace sddp
