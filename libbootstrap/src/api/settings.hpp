// SPDX-License-Identifier: Apache-2.0
// sddp_options (C, possibly NULL) + environment -> validated settings.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "core/base/env_lookup.hpp"
#include "core/base/result.hpp"
#include "core/options/option_params.hpp"
#include "rendezvous/select_transport.hpp"
#include "slurm_ddp/bootstrap.h"

namespace sddp::api {

struct Settings {
    bool nccl = true;
    TransportChoice transport = TransportChoice::automatic;
    std::chrono::milliseconds timeout = kDefaultRendezvousTimeout;
    std::optional<std::string> master_addr;
    std::optional<std::uint16_t> master_port;
    bool local_comm = true;
    int unique_ids = 1;
    bool allow_unauthenticated = false;  // unsafe: TCP rendezvous without SLURM_DDP_SECRET
};

// Timeout: the option when > 0, else SLURM_DDP_TIMEOUT (seconds), else kDefaultRendezvousTimeout.
Result<Settings> read_settings(const sddp_options* opts, const EnvLookup& env);

}  // namespace sddp::api
