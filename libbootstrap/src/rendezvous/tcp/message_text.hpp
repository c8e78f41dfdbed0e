// SPDX-License-Identifier: Apache-2.0
// Compact rank lists for error messages: "3,7-9" rather than 100k numbers.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace sddp::tcp {

// Sorts and de-duplicates `ranks`, joins runs into ranges, and stops after `max_ranges` ranges
// with "... (N more)" so a message stays readable when most of a large job is missing.
std::string format_rank_list(std::vector<int> ranks, std::size_t max_ranges = 32);

}  // namespace sddp::tcp
