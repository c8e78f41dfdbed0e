// SPDX-License-Identifier: Apache-2.0
// Strict decimal parsing for values that come from users, sites and Slurm.
//
// std::stoul accepts "12abc", " 12", "-1" (wrapping) and throws; none of that is acceptable for a
// rank number, so every integer in the core goes through here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sddp {

// Digits only, no sign, no spaces, value <= max. nullopt on anything else.
std::optional<std::uint64_t> parse_decimal(std::string_view text, std::uint64_t max);

// For error messages: the value quoted and shortened so a 1 MB variable cannot flood a log.
std::string quote_value(std::string_view value, std::size_t max_chars = 120);

}  // namespace sddp
