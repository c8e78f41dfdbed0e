// SPDX-License-Identifier: Apache-2.0
// The I/O half of the derive pass (core/task/task_env): the facts fixed before the task started and
// the real look-ups the pass calls when one of its verdicts needs the host.
#pragma once

#include "core/base/env_lookup.hpp"
#include "core/slurm/step_facts.hpp"
#include "core/task/task_env.hpp"

namespace sddp {

// `step_gpu_env`: the step-level GPU lists (the plugin's from user_init; an empty lookup where
// they cannot be known). The caller adds what only it knows (master_at_launch, uid).
TaskHostFacts gather_task_host_facts(const EnvLookup& env, const StepFacts& facts,
                                     EnvLookup step_gpu_env);

// This host's topology, the task's CPU affinity, the route towards a peer and a bind probe.
TaskLookups host_lookups();

}  // namespace sddp
