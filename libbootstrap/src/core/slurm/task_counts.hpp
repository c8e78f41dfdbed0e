// SPDX-License-Identifier: Apache-2.0
// Slurm's compressed per-node task counts, as in SLURM_STEP_TASKS_PER_NODE and
// SLURM_TASKS_PER_NODE: "2(x3),1" means three nodes with 2 tasks, then one node with 1.
//
// The repeat counts come from the environment, so the entry count is computed and capped before
// anything is allocated. Whether the result matches the node count is the caller's check.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/base/result.hpp"

namespace sddp {

inline constexpr std::size_t kMaxTaskCountEntries = 1u << 20;

// One entry per node. Errc::invalid_input on malformed text (empty entries, non-numbers, negative
// or 32-bit-overflowing counts, a zero repeat, missing parentheses); Errc::too_large when the
// list expands to more than `max_entries` entries. A count of 0 is accepted here.
Result<std::vector<std::uint32_t>> expand_task_counts(
    std::string_view spec, std::size_t max_entries = kMaxTaskCountEntries);

}  // namespace sddp
