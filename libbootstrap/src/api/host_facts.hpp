// SPDX-License-Identifier: Apache-2.0
// The few facts sddp_init reads from the machine (kept apart so identity stays pure).
#pragma once

#include <optional>
#include <string>

#include "core/env_lookup.hpp"

namespace sddp::api {

std::string host_name();

}  // namespace sddp::api
