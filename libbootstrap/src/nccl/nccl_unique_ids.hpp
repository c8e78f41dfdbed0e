// SPDX-License-Identifier: Apache-2.0
// Distributing ncclUniqueIds over the rendezvous transport.
//
// The id's creator becomes NCCL's bootstrap root, so for ncclCommInitRankScalable the ids are
// created by the ranks NCCL itself treats as the roots of its id groups (id i by rank
// i*(W/n) + min(i, W%n), the grouping in NCCL's bootstrap), each broadcast from its creator. A
// creator that fails to make its id still broadcasts (a failure flag and the reason), so every
// rank fails at once with that reason instead of waiting for a broadcast that never comes.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/base/result.hpp"
#include "nccl/nccl_library.hpp"
#include "rendezvous/transport.hpp"

namespace sddp::nccl {

// Pure: the rank that creates id `index` of `count` in a world of `world_size`.
int id_root(int index, int count, int world_size);

// Pure: NCCL_COMM_ID (the caller's value, nullopt when unset) pins every id to one address, so
// with several ids the roots would collide and ranks disagree: refused, naming the variable.
Status check_comm_id(const std::optional<std::string>& nccl_comm_id, int count);

Result<std::vector<ncclUniqueId>> share_unique_ids(const NcclApi& nccl, Transport& t, int count);

}  // namespace sddp::nccl
