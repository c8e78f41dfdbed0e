// SPDX-License-Identifier: Apache-2.0
// Compact text for error messages: rank lists ("3,7-9" rather than 100k numbers), durations.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "rendezvous/tcp/socket.hpp"

namespace sddp::tcp {

// Sorts and de-duplicates `ranks`, joins runs into ranges, and stops after `max_ranges` ranges
// with "... (N more)" so a message stays readable when most of a large job is missing.
std::string format_rank_list(std::vector<int> ranks, std::size_t max_ranges = 32);

// "2.5 s".
std::string seconds_text(Clock::duration d);

}  // namespace sddp::tcp
