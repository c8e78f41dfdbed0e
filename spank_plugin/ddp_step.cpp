// SPDX-License-Identifier: Apache-2.0
#include "ddp_step.hpp"

#include <optional>

#include "core/slurm/step_facts.hpp"
#include "plugin_state.hpp"

namespace sddp::plugin {
namespace {

std::optional<DdpStep>& decided() {
    static std::optional<DdpStep> step;
    return step;
}

// The guard, the only one: a step id Slurm gives, not a special step, and --ddp requested.
std::optional<std::uint32_t> ddp_step_id(spank_t sp) {
    std::uint32_t step_id = 0;
    if (spank_get_item(sp, S_JOB_STEPID, &step_id) != ESPANK_SUCCESS) return std::nullopt;
    if (is_special_step(step_id) || !ddp_requested(state())) return std::nullopt;
    return step_id;
}

}  // namespace

void decide_ddp_step(spank_t sp) {
    decided().reset();
    if (const auto step_id = ddp_step_id(sp))
        decided().emplace(DdpStep{*step_id, effective_options(state())});
}

const DdpStep* ddp_step() {
    return decided() ? &*decided() : nullptr;
}

const StepOptions* ddp_step_options() {
    const DdpStep* step = ddp_step();
    return step != nullptr && step->options ? &*step->options : nullptr;
}

}  // namespace sddp::plugin
