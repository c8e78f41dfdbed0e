// SPDX-License-Identifier: Apache-2.0
// The I/O half of the per-task pipeline: reads what core/task_env needs from this host, and
// nothing it does not need (the topology only for `closest` and the NCCL hints).
#pragma once

#include <string>

#include "core/env_lookup.hpp"
#include "core/options.hpp"
#include "core/step_facts.hpp"
#include "core/task_env.hpp"

namespace sddp {

// `step_gpu_env`: the step-level GPU lists (the plugin's from user_init; an empty lookup where
// they cannot be known). `note` receives what the topology reader wants a verbose log to say.
TaskHostFacts gather_task_host_facts(const EnvLookup& env, const StepFacts& facts,
                                     const DdpOptions& opts, EnvLookup step_gpu_env,
                                     std::string* note = nullptr);

}  // namespace sddp
