// SPDX-License-Identifier: Apache-2.0
// The step's hosts in SLURM_NODEID order.
//
// Slurm sorts SLURM_STEP_NODELIST, and for ordinary steps SLURM_NODEID indexes that list. A step
// of a heterogeneous job (srun --het-group=0,1) numbers its nodes in component order instead,
// each component's nodes sorted: with components on n2 then n1, n2 is node 0 and runs rank 0.
#pragma once

#include <string>
#include <vector>

#include "core/base/result.hpp"
#include "core/slurm/step_facts.hpp"

namespace sddp {

// Hosts indexed by SLURM_NODEID. Checks that this task's node sits at its own SLURM_NODEID, so
// an order that cannot be rebuilt is an error, not a wrong MASTER_ADDR.
Result<std::vector<std::string>> nodes_by_nodeid(const StepFacts& facts);

}  // namespace sddp
