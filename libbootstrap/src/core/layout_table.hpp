// The human-readable mapping of a step: one table, printed by rank 0 for `--ddp=verbose` and by
// `slurm-ddp env --table`.
#pragma once

#include <optional>
#include <string>

#include "core/launch_env.hpp"
#include "core/options.hpp"
#include "core/step_facts.hpp"

namespace sddp {

// `gpus_here`: the GPU list of the printing task's node (other nodes show "(node-local)": their
// lists are only known on those nodes). Rows are capped so a 100k-rank step prints a summary.
std::string format_layout_table(const StepFacts& facts, const LaunchEnv& launch,
                                const DdpOptions& opts, const std::optional<std::string>& gpus_here,
                                std::size_t max_rows = 64);

}  // namespace sddp
