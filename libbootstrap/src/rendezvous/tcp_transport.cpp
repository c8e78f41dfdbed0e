// SPDX-License-Identifier: Apache-2.0
#include "rendezvous/tcp_transport.hpp"

#include "rendezvous/tcp_node.hpp"

namespace sddp {

Result<std::unique_ptr<Transport>> make_tcp_transport(const RendezvousConfig& cfg) {
    SDDP_TRY(node, tcp::Node::create(cfg));
    return std::unique_ptr<Transport>(std::move(node));
}

}  // namespace sddp
