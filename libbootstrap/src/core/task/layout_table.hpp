// SPDX-License-Identifier: Apache-2.0
// The human-readable mapping of a step: one table, printed by rank 0 for `--ddp=verbose` and by
// `slurm-ddp env --table`.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "core/options/options.hpp"
#include "core/slurm/step_facts.hpp"
#include "core/task/launch_env.hpp"

namespace sddp {

// Describes the GPUs of local rank `local_rank` of a node running `node_tasks` tasks of the step,
// by the binding rule applied to the printing task's node's GPU allocation.
using LocalGpuDescriber =
    std::function<std::string(std::uint32_t local_rank, std::uint32_t node_tasks)>;

// Every row's GPU column comes from the same rule: the binding each node computes for that
// local rank, shown with the printing node's GPU allocation (exact there, and on every node
// that got the same allocation: --gres=gpu:N, --gpus-per-node, --gpus-per-task). A line above
// the rows says so, so no row reads differently from another. Rows are capped so that a
// 100k-rank step prints a summary, not 100k lines.
std::string format_layout_table(const StepFacts& facts, const LaunchEnv& launch,
                                const StepOptions& opts, const LocalGpuDescriber& gpus_here,
                                std::size_t max_rows = 64);

}  // namespace sddp
