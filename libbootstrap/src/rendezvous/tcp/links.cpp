// SPDX-License-Identifier: Apache-2.0
#include "rendezvous/tcp/links.hpp"

#include <algorithm>

#include "os/host_name.hpp"
#include "rendezvous/protocol/leader_tree.hpp"

namespace sddp::tcp {
namespace {

std::string hostname_or(const std::string& configured) {
    if (!configured.empty()) return configured;
    return local_host_name().value_or("unknown-host");
}

}  // namespace

Place::Place(const RendezvousConfig& config) : cfg(config) {
    host = hostname_or(cfg.host);
    self = "rank " + std::to_string(cfg.rank) + " (" + host + ")";
    master = cfg.master_addr + ":" + std::to_string(cfg.master_port);
    is_root = cfg.rank == 0;
    const bool two_level = cfg.local_world_size > 1;
    serves_locals = two_level && cfg.local_rank == 0;
    local_leaf = two_level && cfg.local_rank > 0;
    tree = !cfg.leaders.empty() && !local_leaf;
    if (tree) {
        const int nodes = static_cast<int>(cfg.leaders.size());
        parent_node = tree_parent(cfg.node_rank, cfg.tree_fanout);
        tree_children = sddp::tree_children(cfg.node_rank, nodes, cfg.tree_fanout);
    }
    timeout = cfg.timeout;
    // Servers give up a little before their children so that their diagnosis (which ranks are
    // missing) reaches everyone before the children's own, vaguer, timeouts fire.
    margin = std::min<Clock::duration>(std::chrono::seconds(1), timeout / 10);
    handshake_timeout = std::clamp<Clock::duration>(timeout / 2, std::chrono::milliseconds(200),
                                                    std::chrono::seconds(5));
}

Clock::time_point Place::deadline_from(Clock::time_point start) const {
    if (is_root) return start + timeout - margin;
    if (serves_locals || !tree_children.empty()) return start + timeout - margin / 2;
    return start + timeout;
}

}  // namespace sddp::tcp
