// Distributing ncclUniqueIds over the rendezvous transport.
//
// The id's creator becomes NCCL's bootstrap root, so for ncclCommInitRankScalable the ids are
// created by ranks spread over the world (id i by rank i * world / n, as NCCL's documentation
// recommends), each broadcast from its creator. A creator that fails to make its id still
// broadcasts (a failure flag and the reason), so every rank fails at once with that reason
// instead of waiting for a broadcast that never comes.
#pragma once

#include <nccl.h>

#include <vector>

#include "core/result.hpp"
#include "rendezvous/transport.hpp"

namespace sddp::nccl {

int id_root(int index, int count, int world_size);

Result<std::vector<ncclUniqueId>> share_unique_ids(Transport& t, int count);

}  // namespace sddp::nccl
