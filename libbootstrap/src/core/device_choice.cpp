#include "core/device_choice.hpp"

#include "core/contract.hpp"
#include "core/numbers.hpp"

namespace sddp {
namespace {

std::string visible_text(const DeviceChoiceInput& in) {
    return in.visible_devices ? "CUDA_VISIBLE_DEVICES=" + quote_value(*in.visible_devices)
                              : std::string("CUDA_VISIBLE_DEVICES unset");
}

std::string count_text(int n) {
    return std::to_string(n) + (n == 1 ? " CUDA device is" : " CUDA devices are");
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
        if (*in.ddp_device < in.device_count) return *in.ddp_device;
        return make_error(Errc::invalid_input,
                          std::string(contract::kDeviceVar) + "=" + std::to_string(*in.ddp_device) +
                              " but only " + count_text(in.device_count) + " visible (" +
                              visible_text(in) +
                              "): CUDA_VISIBLE_DEVICES was changed after srun --ddp bound the "
                              "GPUs; do not change it inside the job step");
    }
    if (in.local_rank < in.device_count) return in.local_rank;
    return make_error(
        Errc::invalid_input,
        "LOCAL_RANK=" + std::to_string(in.local_rank) + " but only " + count_text(in.device_count) +
            " visible (" + visible_text(in) + "), so cudaSetDevice(" +
            std::to_string(in.local_rank) +
            ") would fail with \"invalid device ordinal\": this node runs more tasks than it "
            "gives each task GPUs. Use srun --ddp (it binds one GPU per task), "
            "--gpus-per-task=1, or --ntasks-per-node <= GPUs per node");
}

}  // namespace sddp
