// SPDX-License-Identifier: Apache-2.0
// slurmstepd: a --ddp step in a pyxis container whose task_init pyxis runs after ours is refused
// at its start, naming the fix (core/slurm/spank_order.hpp says why nothing else can help).
#pragma once

#include <optional>
#include <string>

#include "spank_api.hpp"

namespace sddp::plugin {

// The remote init hook, the only one that still sees the step's SPANK option variables (Slurm
// clears them before init_post_opt): when pyxis runs this step in a container and was loaded
// after this plugin, keeps the refusal for task_init. Costs a few spank_getenv calls in a step
// without a container.
void note_container_order(spank_t sp);

// task_init: the refusal note_container_order kept, else nullopt.
std::optional<std::string> container_order_problem();

}  // namespace sddp::plugin
