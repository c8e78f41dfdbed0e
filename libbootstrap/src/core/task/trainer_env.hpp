// SPDX-License-Identifier: Apache-2.0
// What trainers and launchers need beyond the rank variables, in one pure step after
// derive_launch_env: launcher (PET_*), torchrun's worker defaults, torchelastic markers, the
// debug directory and the gloo interface hint. The plugin and `slurm-ddp env` both call it, so
// what one shows is what the other sets.
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

struct TrainerEnvInput {
    const StepFacts* facts = nullptr;
    const LaunchEnv* launch = nullptr;
    const StepOptions* opts = nullptr;
    EnvLookup env;  // the task's environment (user-set names, SLURM_RESTART_COUNT, ...)
    std::optional<std::uint32_t> node_gpus;   // the step's GPUs on this node, if known
    std::optional<std::string> gloo_ifname;   // probed by the caller under net-hints
    std::optional<std::string> gloo_why_not;  // why the probe found none (verbose table)
};

struct TrainerEnv {
    // launch->vars (launcher: without the per-rank names), then the additions in order.
    std::vector<EnvAssignment> vars;
    bool launcher = false;  // the caller gives the task all the step's GPUs, no OMP_NUM_THREADS
    std::uint32_t nproc_per_node = 1;      // launcher: the workers it starts on this node
    std::optional<std::string> debug_dir;  // to create (the caller does the I/O)
    std::vector<std::string> notes;        // lines for the verbose table
};

Result<TrainerEnv> derive_trainer_env(const TrainerEnvInput& in);

// Every name derive_trainer_env may add (documentation and "untouched" tests).
std::vector<std::string> trainer_variable_names();

// The notes as "slurm-ddp: ..." lines for the verbose table.
std::string format_trainer_notes(const TrainerEnv& t);

}  // namespace sddp
