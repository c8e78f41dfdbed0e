// SPDX-License-Identifier: Apache-2.0
// slurmstepd, per task of a --ddp step (task_init): derive the DDP environment and set it; and
// remove what it left on the node when the step ends.
#pragma once

#include <cstdint>
#include <optional>

#include "core/base/result.hpp"
#include "core/options/options.hpp"
#include "spank_api.hpp"

namespace sddp::plugin {

// user_init (slurmstepd, before the tasks fork): remember the step-level GPU lists.
void remember_step_env(spank_t sp);
// task_init of a task the plugin does not set up: drops the secret srun made for every step.
int stay_out(spank_t sp);
// task_init of a --ddp task, with the step's merged options (an error fails the task). Sets
// *configured_rank to the task's RANK when it set the task up for --ddp (and only then).
int setup_task(spank_t sp, const Result<StepOptions>& opts,
               std::optional<std::uint32_t>* configured_rank);
// slurm_spank_exit of a --ddp=hostfile step: removes the step's host file on this node.
void remove_hostfile_of_step(spank_t sp, std::uint32_t step_id);

}  // namespace sddp::plugin
