// SPDX-License-Identifier: Apache-2.0
// NCCL's own environment variables that overrule what the layer asks of NCCL.
//
// NCCL applies NCCL_COMM_BLOCKING (0 or 1) to every communicator's config after the caller set
// it (envConfigOverride in NCCL's init.cc): with 1 the non-blocking parent becomes blocking, so
// ncclCommInitRank* no longer returns until every peer arrived and the timeout cannot bound it;
// with 0 the children handed to the caller become non-blocking, and every collective of code
// written for plain NCCL may return ncclInProgress. Neither is what the caller asked for.
#pragma once

#include <optional>
#include <string>

#include "core/base/result.hpp"

namespace sddp::nccl {

// Pure: how NCCL reads NCCL_COMM_BLOCKING (nullopt when unset): 0 or 1 when it overrides the
// configs, nullopt when NCCL ignores the value (unset, not a number, another number).
std::optional<int> comm_blocking_override(const std::optional<std::string>& value);

// Pure: refused when NCCL would override the configs, naming the variable, its value and the fix.
Status check_comm_blocking(const std::optional<std::string>& value);

}  // namespace sddp::nccl
