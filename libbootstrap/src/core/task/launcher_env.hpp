// SPDX-License-Identifier: Apache-2.0
// `--ddp=launcher`: one task per node runs a launcher (torchrun, accelerate launch, deepspeed),
// which starts the workers and numbers them itself.
//
// The task gets what torchrun reads from its environment (torch/distributed/run.py and
// argparse_util.py: every option falls back to PET_<NAME>), with --rdzv-backend=static
// semantics: PET_NNODES, PET_NODE_RANK, PET_NPROC_PER_NODE, PET_MASTER_ADDR, PET_MASTER_PORT. The
// launcher's node 0 serves the store on PET_MASTER_ADDR:PET_MASTER_PORT. Accelerate and DeepSpeed
// read no such variables (only their command lines), so their command lines use these values;
// Accelerate's --num_processes is the total, exported as SLURM_DDP_NUM_PROCESSES.
// Per-rank variables (RANK, LOCAL_RANK, WORLD_SIZE, ...) would describe the launcher as one worker
// of a world of N tasks, which misleads launchers and frameworks that read them; they are left out.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/base/env_lookup.hpp"
#include "core/base/result.hpp"
#include "core/options/options.hpp"
#include "core/slurm/step_facts.hpp"
#include "core/task/launch_env.hpp"

namespace sddp {

struct LauncherEnv {
    std::uint32_t nproc_per_node = 1;
    std::string nproc_source;         // "option", "gpus" or "default"
    std::vector<EnvAssignment> vars;  // launch.vars without per-rank names, plus PET_* and more
};

// `node_gpus`: the step's GPUs on this node (0 or nullopt: none known). Refused when any node of
// the step runs more than one task.
Result<LauncherEnv> derive_launcher_env(const StepFacts& facts, const LaunchEnv& launch,
                                        const StepOptions& opts,
                                        std::optional<std::uint32_t> node_gpus);

// What the launcher must see of the node's GPUs: all of the step's (the launcher hands them to
// its workers). Returns CUDA_VISIBLE_DEVICES=`step_visible` when Slurm narrowed the task's list
// (e.g. --gpus-per-task), else nothing.
// `var` is the list's variable (core/gpu/gpu_binding.hpp kVisibleDeviceVars).
std::vector<EnvAssignment> launcher_gpu_env(const std::optional<std::string>& step_visible,
                                            const std::optional<std::string>& task_visible,
                                            const std::string& var = "CUDA_VISIBLE_DEVICES");

// Entries of a GPU list such as CUDA_VISIBLE_DEVICES ("0,1,3" -> 3); nullopt when unset/empty.
std::optional<std::uint32_t> gpu_list_count(const std::optional<std::string>& list);

// Names --ddp=launcher leaves out, and the names it adds (documentation, tests).
const std::vector<std::string>& launcher_omitted_names();
const std::vector<std::string>& launcher_variable_names();

}  // namespace sddp
