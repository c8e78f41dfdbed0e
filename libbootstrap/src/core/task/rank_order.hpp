// SPDX-License-Identifier: Apache-2.0
// RANK under `--ddp=rank-order=node`: contiguous per node, in node order, like torchrun's.
//
// Slurm's SLURM_PROCID follows the distribution (-m cyclic, plane=N), so with `block` (the
// default, RANK=SLURM_PROCID) ranks of one node need not be neighbours. Code that builds
// intra-node groups from RANK // LOCAL_WORLD_SIZE then groups the wrong ranks. `node` renumbers:
// the tasks of the nodes before this one, then SLURM_LOCALID. Slurm numbers local ids in
// SLURM_PROCID order on each node, so the relative order of a node's tasks is kept.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/base/result.hpp"
#include "core/options/options.hpp"
#include "core/slurm/step_facts.hpp"

namespace sddp {

// RankOrder is an option value (core/options/options.hpp), typed when --ddp is parsed.

// This task's RANK under `order` (block: SLURM_PROCID).
std::uint32_t ordered_rank(const StepFacts& facts, RankOrder order);

// The global ranks on each node under `order`, for the verbose table. node needs no
// distribution facts; block needs what ranks_per_node needs (no arbitrary distribution).
Result<std::vector<std::vector<std::uint32_t>>> ordered_ranks_per_node(const StepFacts& facts,
                                                                       RankOrder order);

// The index in facts.nodes of rank 0's node: from the layout under `order` where Slurm's
// variables give it, else the node MASTER_ADDR names (`master_addr` less the --ddp=addr-suffix
// `addr_suffix`: arbitrary distributions, whose host file puts rank 0 anywhere), else the first.
std::size_t rank0_node(const StepFacts& facts, RankOrder order, const std::string& master_addr,
                       const std::string& addr_suffix);

}  // namespace sddp
