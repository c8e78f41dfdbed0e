// SPDX-License-Identifier: Apache-2.0
// The GPU lists Slurm gives another task of the node when it narrows them per task
// (--gpus-per-task=N, --gpu-bind=map_gpu:...), rebuilt from the step-level lists and
// SLURMD_TRES_BIND, for the rows of the verbose table that describe a node-mate's binding.
#pragma once

#include <optional>
#include <string_view>

#include "core/gpu/gpu_binding.hpp"

namespace sddp {

// `s`: the printing task's lists (task-level as Slurm narrowed them, step-level from user_init);
// `tres_bind`: SLURMD_TRES_BIND ("gpu:per_task:1", "gpu:map_gpu:3,2,1,0"). Returns `s` with the
// task-level lists local rank `local_rank` gets, or nullopt where they cannot be known: another
// binding rule, no step-level lists, or a rule that does not give back the printing task's own
// lists for `own_local_rank` (then it is not the rule Slurm applied).
std::optional<SlurmGpuEnv> slurm_task_gpus(const SlurmGpuEnv& s, std::string_view tres_bind,
                                           int own_local_rank, int local_rank);

}  // namespace sddp
