// SPDX-License-Identifier: Apache-2.0
// The transport of a world of one: every collective is local. Used whenever WORLD_SIZE is 1,
// so a single process needs no MASTER_ADDR, no port and no PMI.
#pragma once

#include <memory>

#include "rendezvous/transport.hpp"

namespace sddp {

std::unique_ptr<Transport> make_self_transport();

}  // namespace sddp
