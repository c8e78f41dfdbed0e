// SPDX-License-Identifier: Apache-2.0
// Rank 0's check of MASTER_PORT on its own node.
//
// Which port a step gets is core/port_block (a block of ports per step; every task computes it
// alone from facts all tasks share, never from a node's own settings such as its ephemeral port
// range, or two nodes would disagree and wait silently until the timeout). A port that another
// process happens to hold on rank 0's node is caught there, at launch, by master_port_status.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/result.hpp"

namespace sddp {

// Rank 0's check of the chosen port on its own node: `bind_errno` is what binding the port gave
// (0: free). A busy port is an error naming the port and the fixes, at once, instead of every
// rank waiting for a server that cannot start.
Status master_port_status(std::uint16_t port, std::string_view source, int bind_errno);

}  // namespace sddp
