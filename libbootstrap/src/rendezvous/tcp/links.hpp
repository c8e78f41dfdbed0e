// SPDX-License-Identifier: Apache-2.0
// This rank's place in the rendezvous tree, worked out once from its configuration, and the record
// of one link to a peer: what the node's loop and the join (join.hpp) share. The collectives see
// links only through tree_links.hpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "rendezvous/protocol/wire.hpp"
#include "rendezvous/tcp/connection.hpp"
#include "rendezvous/tcp/fifo.hpp"
#include "rendezvous/tcp/socket.hpp"
#include "rendezvous/transport.hpp"

namespace sddp::tcp {

struct Place {
    explicit Place(const RendezvousConfig& config);

    // When a wait started at `start` gives up: servers give up a little before their children,
    // so that their diagnosis (which ranks are missing) reaches everyone before the children's
    // own, vaguer, timeouts fire.
    Clock::time_point deadline_from(Clock::time_point start) const;

    RendezvousConfig cfg;
    std::string host;
    std::string self;    // "rank 3 (host)": the prefix of every error this rank originates
    std::string master;  // "addr:port"
    bool is_root = false;
    bool serves_locals = false;      // root or node leader with local ranks to accept
    bool local_leaf = false;         // joins its node leader rather than rank 0
    bool tree = false;               // a leader in the leaders' tree (cfg.leaders given)
    int parent_node = -1;            // tree: the node whose leader is this leader's parent
    std::vector<int> tree_children;  // tree: the nodes whose leaders join this one over TCP
    Clock::duration timeout{};
    Clock::duration margin{};
    Clock::duration handshake_timeout{};
};

enum class LinkKind { pending, child, parent };

struct Link {
    std::uint64_t id = 0;
    Connection conn;
    LinkKind kind = LinkKind::pending;
    bool via_local = false;  // accepted on (or connected over) the node-local socket
    std::uint32_t events = 0;
    // Handshake (server side).
    wire::Nonce server_nonce{};
    // Identity, once authenticated.
    int rank = -1;
    int local_rank = 0;
    int local_world_size = 1;
    int node_rank = 0;
    std::string host;  // as the peer said, made printable
    Fifo<OwnedFrame> inbox;
    Link(std::uint64_t i, Connection c) : id(i), conn(std::move(c)) {}
};

}  // namespace sddp::tcp
