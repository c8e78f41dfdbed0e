// SPDX-License-Identifier: Apache-2.0
// The GPUs a job holds on one node, from `scontrol show job -d` ("Nodes=n1 CPU_IDs=0-7 Mem=0
// GRES=gpu:4(IDX:0-3)"), for the CLI (`slurm-ddp env`), which runs inside a task.
//
// Why: under --gpus-per-task (and --gpu-bind=single/map_gpu) Slurm narrows CUDA_VISIBLE_DEVICES
// and SLURM_STEP_GPUS to the task's own GPU before the task starts, and the plugin widens it back
// from the step's list it kept from slurm_spank_user_init. A task cannot see that list; the
// controller's record of the job's GPUs on the node is the same list whenever the step uses all
// of them (SLURM_GPUS_ON_NODE equal to the job's count there), which the caller checks.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace sddp {

// "0,1,2,3" (global indices, ascending as Slurm prints them) for `node`; nullopt when the text
// has no line for it or no gpu GRES with indices there.
std::optional<std::string> job_gpu_indices(std::string_view show_job_detail, std::string_view node);

}  // namespace sddp
