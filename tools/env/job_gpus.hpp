// SPDX-License-Identifier: Apache-2.0
// The step's GPU lists on this node as the plugin keeps them from slurm_spank_user_init, rebuilt
// inside a running task for `slurm-ddp env` from the controller's record of the job
// (core/slurm/job_gres.hpp), so that the CLI widens a narrowed task's list exactly as the plugin
// does.
#pragma once

#include <chrono>

#include "core/base/env_lookup.hpp"

namespace sddp::cli {

// An empty lookup unless Slurm narrowed this task's list (SLURM_GPUS_ON_NODE above its own
// count) and `scontrol show job -d` (bounded by `budget`) lists exactly SLURM_GPUS_ON_NODE GPUs
// of the job on SLURMD_NODENAME: then CUDA_VISIBLE_DEVICES (or Slurm's ROCR_VISIBLE_DEVICES /
// ZE_AFFINITY_MASK) and SLURM_STEP_GPUS are those indices.
EnvLookup step_gpu_env_from_job(const EnvLookup& env, std::chrono::milliseconds budget);

}  // namespace sddp::cli
