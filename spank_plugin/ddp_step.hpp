// SPDX-License-Identifier: Apache-2.0
// slurmstepd's one question before any per-step work: is this a --ddp step, and with which
// options? The batch script, extern and interactive steps never are, whatever was asked.
//
// Asked once, in init_post_opt: by then Slurm has run the option callback for every source of
// --ddp (the command line, an #SBATCH export), and the tasks, forked later, inherit the answer,
// as do the clones Slurm runs later hooks in under contain_spank. Every later hook reads it.
#pragma once

#include <cstdint>

#include "core/base/result.hpp"
#include "core/options/options.hpp"
#include "spank_api.hpp"

namespace sddp::plugin {

struct DdpStep {
    std::uint32_t step_id = 0;
    // The site's options merged with the user's, or the first configuration error (reported in
    // task_init, where the user sees it).
    Result<StepOptions> options;
};

// init_post_opt in slurmstepd: decides, merging the options once.
void decide_ddp_step(spank_t sp);

// The decision: nullptr for a step that is not a --ddp step (or before decide_ddp_step).
const DdpStep* ddp_step();

// The options of a --ddp step whose options are valid, else nullptr.
const StepOptions* ddp_step_options();

}  // namespace sddp::plugin
