// SPDX-License-Identifier: Apache-2.0
// slurmstepd's one question before any per-step work: is this a --ddp step, and with which
// options? The batch script, extern and interactive steps never are, whatever was asked.
#pragma once

#include <optional>

#include "core/options/options.hpp"
#include "spank_api.hpp"

namespace sddp::plugin {

// The site's and the user's options merged, for a --ddp step whose options are valid; nullopt
// for any other step (invalid options fail the step in task_init, where the user sees why).
std::optional<DdpOptions> ddp_step_options(spank_t sp);

}  // namespace sddp::plugin
