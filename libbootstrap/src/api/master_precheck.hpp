// SPDX-License-Identifier: Apache-2.0
// The library's cheap check of MASTER_ADDR before a TCP rendezvous; core/check/check_verdict judges
// what it finds.
//
// Why: a rank on another node than rank 0 whose MASTER_ADDR does not resolve would retry until
// the rendezvous timeout (minutes) and then say only that rank 0 was not reached. One bounded
// lookup turns that into an immediate error naming the host, the name and the fix. A MASTER_ADDR
// on loopback (the 127.0.1.1 line of a Debian /etc/hosts) gets a warning on stderr up front:
// "nodes" sharing one host's network legitimately reach rank 0 there.
#pragma once

#include <chrono>
#include <string>

#include "core/base/result.hpp"
#include "core/task/identity.hpp"

namespace sddp::api {

// Only for ranks the launcher placed away from rank 0 (node_rank > 0 of several nodes); others
// pass. Lookup failures are retried for a short grace (a resolver that is still starting), never
// past `timeout`.
Status check_master_address(const Identity& id, const std::string& host,
                            std::chrono::milliseconds timeout);

}  // namespace sddp::api
