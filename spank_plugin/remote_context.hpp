// SPDX-License-Identifier: Apache-2.0
// slurmstepd, per task (task_init): derive the DDP environment and set it.
#pragma once

#include <cstdint>
#include <optional>

#include "spank_api.hpp"

namespace sddp::plugin {

// user_init (slurmstepd, before the tasks fork): remember the step-level GPU lists.
int on_user_init(spank_t sp);
// Sets *configured_rank to the task's RANK when it set the task up for --ddp (and only then).
int on_task_init(spank_t sp, std::optional<std::uint32_t>* configured_rank);
// slurm_spank_exit in slurmstepd: removes what the step left on the node (--ddp=hostfile).
int on_remote_exit(spank_t sp);

}  // namespace sddp::plugin
