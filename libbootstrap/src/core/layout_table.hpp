// SPDX-License-Identifier: Apache-2.0
// The human-readable mapping of a step: one table, printed by rank 0 for `--ddp=verbose` and by
// `slurm-ddp env --table`.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "core/launch_env.hpp"
#include "core/options.hpp"
#include "core/step_facts.hpp"

namespace sddp {

// Describes the GPUs of a local rank on the printing task's node.
using LocalGpuDescriber = std::function<std::string(std::uint32_t local_rank)>;

// Ranks on the printing task's node get `gpus_here(local_rank)`; other nodes show
// "(node-local)": their GPU lists are only known there. Rows are capped so that a 100k-rank step
// prints a summary, not 100k lines.
std::string format_layout_table(const StepFacts& facts, const LaunchEnv& launch,
                                const DdpOptions& opts, const LocalGpuDescriber& gpus_here,
                                std::size_t max_rows = 64);

}  // namespace sddp
