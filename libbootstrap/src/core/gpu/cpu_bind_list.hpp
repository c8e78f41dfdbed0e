// SPDX-License-Identifier: Apache-2.0
// SLURM_CPU_BIND_LIST: the CPU masks of every task of the step on this node, one hex mask per
// local rank ("0x3,0xC" = local rank 0 on CPUs 0-1, local rank 1 on CPUs 2-3), as Slurm's
// task/affinity plugin exports them. gpu-bind=closest needs the places of *all* local tasks so
// that every task computes the same assignment alone; its own affinity is not enough.
#pragma once

#include <string_view>
#include <vector>

#include "core/base/result.hpp"

namespace sddp {

inline constexpr int kMaxCpuIndex = 1 << 16;  // far beyond any node; bounds work on bad input

// CPU indices per mask, in list order. Errors name the variable and the bad mask.
Result<std::vector<std::vector<int>>> parse_cpu_bind_list(std::string_view text);

}  // namespace sddp
