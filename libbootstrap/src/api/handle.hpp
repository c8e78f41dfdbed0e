// SPDX-License-Identifier: Apache-2.0
// What an sddp_handle holds. The C API hands out pointers to this struct, opaque to callers.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>

#include "core/options/option_params.hpp"
#include "core/task/identity.hpp"
#include "nccl/nccl_layer.hpp"
#include "rendezvous/transport.hpp"

struct sddp_handle {
    sddp::Identity id;
    // Final layout: from the launcher where it says, else derived from the preflight host names.
    int local_rank = 0;
    int local_world_size = 1;
    int node_rank = 0;
    int num_nodes = 1;
    int cuda_device = -1;
    std::string host;
    std::string transport_name;
    std::string source;
    std::chrono::milliseconds timeout{sddp::kDefaultRendezvousTimeout};
    std::unique_ptr<sddp::Transport> transport;
    std::unique_ptr<sddp::nccl::Comms> comms;
    std::mutex mu;  // one collective at a time: the transports are not thread-safe

    // "rank 3 of 8 on host n2", the prefix of every message about this handle.
    std::string where() const {
        return "rank " + std::to_string(id.rank) + " of " + std::to_string(id.world_size) +
               " on host " + host;
    }
};
