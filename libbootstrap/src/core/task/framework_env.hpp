// SPDX-License-Identifier: Apache-2.0
// What torchrun gives its workers beyond the rank variables, for steps that --ddp launches
// directly.
//
//  - Worker defaults (always): torchrun's agent exports TORCH_NCCL_ASYNC_ERROR_HANDLING=1 to
//    workers (torch/distributed/elastic/agent/server/local_elastic_agent.py). Without it a hung
//    collective is not torn down. Only that name: PyTorch 2.2 and later warn on every rank when
//    the pre-2.2 NCCL_ASYNC_ERROR_HANDLING is set (seen with 2.11 on a GPU), and a rank that
//    dies ends the step anyway (fail fast). Nothing is set when the user set either name (a
//    user's 0 must not be contradicted by the other name).
//  - `--ddp=torchelastic` (opt-in): the markers that make frameworks treat the step as
//    torchrun-launched: torch.distributed.is_torchelastic_launched() tests TORCHELASTIC_RUN_ID,
//    and Lightning then trusts MASTER_ADDR/MASTER_PORT instead of rewriting them from the job's
//    node list. TORCHELASTIC_USE_AGENT_STORE is never set: there is no agent store, and "True"
//    would make init_process_group connect to MASTER_PORT as a client only.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/base/env_lookup.hpp"
#include "core/base/result.hpp"
#include "core/slurm/step_facts.hpp"

namespace sddp {

// `env` is the task's environment as the user left it.
std::vector<EnvAssignment> worker_default_env(const EnvLookup& env);

// TORCHELASTIC_RUN_ID=<job>.<step>, TORCHELASTIC_RESTART_COUNT (SLURM_RESTART_COUNT or 0),
// TORCHELASTIC_MAX_RESTARTS=0. A malformed SLURM_RESTART_COUNT is an error naming it.
Result<std::vector<EnvAssignment>> torchelastic_env(
    const StepFacts& facts, const std::optional<std::string>& restart_count);

const std::vector<std::string>& framework_variable_names();

}  // namespace sddp
