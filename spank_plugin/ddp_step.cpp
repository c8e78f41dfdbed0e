// SPDX-License-Identifier: Apache-2.0
#include "ddp_step.hpp"

#include <cstdint>

#include "core/slurm/step_facts.hpp"
#include "plugin_state.hpp"

namespace sddp::plugin {

std::optional<DdpOptions> ddp_step_options(spank_t sp) {
    std::uint32_t step_id = 0;
    if (spank_get_item(sp, S_JOB_STEPID, &step_id) != ESPANK_SUCCESS) return std::nullopt;
    if (is_special_step(step_id) || !ddp_requested(state())) return std::nullopt;
    auto opts = effective_options(state());
    if (!opts) return std::nullopt;
    return std::move(*opts);
}

}  // namespace sddp::plugin
