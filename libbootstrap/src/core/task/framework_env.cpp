// SPDX-License-Identifier: Apache-2.0
#include "core/task/framework_env.hpp"

#include "core/base/numbers.hpp"

namespace sddp {

const std::vector<std::string>& framework_variable_names() {
    static const std::vector<std::string> kNames{
        "TORCH_NCCL_ASYNC_ERROR_HANDLING", "TORCHELASTIC_RUN_ID", "TORCHELASTIC_RESTART_COUNT",
        "TORCHELASTIC_MAX_RESTARTS"};
    return kNames;
}

std::vector<EnvAssignment> worker_default_env(const EnvLookup& env) {
    if (env("TORCH_NCCL_ASYNC_ERROR_HANDLING") || env("NCCL_ASYNC_ERROR_HANDLING")) return {};
    return {EnvAssignment{"TORCH_NCCL_ASYNC_ERROR_HANDLING", "1", true}};
}

Result<std::vector<EnvAssignment>> torchelastic_env(
    const StepFacts& f, const std::optional<std::string>& restart_count) {
    std::string restarts = "0";
    if (restart_count && !restart_count->empty()) {
        if (!parse_decimal(*restart_count, 1u << 30)) {
            return make_error(Errc::invalid_input,
                              "SLURM_RESTART_COUNT=" + quote_value(*restart_count) +
                                  " is not a count; it comes from Slurm's requeue, so unset it if "
                                  "you exported it yourself");
        }
        restarts = *restart_count;
    }
    return std::vector<EnvAssignment>{
        {"TORCHELASTIC_RUN_ID", std::to_string(f.job_id) + "." + std::to_string(f.step_id), false},
        {"TORCHELASTIC_RESTART_COUNT", restarts, false},
        {"TORCHELASTIC_MAX_RESTARTS", "0", false}};
}

}  // namespace sddp
