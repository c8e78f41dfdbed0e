// SPDX-License-Identifier: Apache-2.0
// `--ddp=debug[=DIR]`: the diagnostics people wire by hand when a job hangs, into one directory
// per step, DIR/<job>.<step> (DIR defaults to slurm-ddp-debug; a relative DIR is taken from
// SLURM_SUBMIT_DIR, so every node names the same place).
//
//   NCCL_DEBUG=INFO, NCCL_DEBUG_FILE      NCCL's log, one file per rank (per node and process
//                                         under launcher: NCCL expands %p to the pid)
//   TORCH_DISTRIBUTED_DEBUG=DETAIL        c10d's collective checks and logs
//   TORCH_NCCL_TRACE_BUFFER_SIZE=2000     ProcessGroupNCCL's flight recorder (0 disables it)
//   TORCH_NCCL_DUMP_ON_TIMEOUT=1          dump it when a collective times out
//   TORCH_NCCL_DEBUG_INFO_TEMP_FILE       where the dumps go (torch appends the rank)
//   SLURM_DDP_DEBUG_DIR                   the directory: libbootstrap writes stacks.<host>.txt
//                                         there when its rendezvous times out
// Every variable keeps a value the user exported.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/base/env_lookup.hpp"
#include "core/base/result.hpp"
#include "core/options/options.hpp"
#include "core/slurm/step_facts.hpp"

namespace sddp {

struct DebugEnv {
    std::string dir;  // the step's directory (absolute when SLURM_SUBMIT_DIR is)
    std::vector<EnvAssignment> vars;
};

// `rank`: this task's RANK, or nullopt under launcher (one task runs many workers).
Result<DebugEnv> derive_debug_env(const StepOptions& opts, const StepFacts& facts,
                                  const std::optional<std::string>& submit_dir,
                                  std::optional<std::uint32_t> rank);

const std::vector<std::string>& debug_variable_names();

}  // namespace sddp
