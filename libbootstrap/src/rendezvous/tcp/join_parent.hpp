// SPDX-License-Identifier: Apache-2.0
// The client half of the handshake: reach a parent (rank 0 over TCP, or the node leader over
// its local socket) and prove we hold the step secret while it proves the same to us.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "core/base/result.hpp"
#include "os/hmac_sha256.hpp"
#include "rendezvous/tcp/connection.hpp"
#include "rendezvous/transport.hpp"

namespace sddp::tcp {

struct ParentTarget {
    bool local = false;            // abstract Unix socket to the node leader; else TCP to rank 0
    std::string host;              // TCP: master_addr
    std::uint16_t port = 0;        // TCP: master_port
    std::string local_name;        // local: abstract socket name
    std::string description;       // "rank 0 at host:port", for messages
    std::uint32_t pace_index = 0;  // TCP: position among the parent's children (join pacing)
};

struct ParentLink {
    std::unique_ptr<Connection> conn;
    int rank = 0;      // the parent's rank, from its welcome
    std::string host;  // the parent's host, from its welcome
};

// Connects with exponential backoff and jitter until `deadline` (nobody listening yet is
// normal while rank 0 starts), then runs the handshake, each attempt bounded by a few seconds.
// Only a refusal or abort proven with the step's secret is final (wrong step, duplicate
// rank...): anything else a peer answers (garbage, another protocol version, an unproven
// refusal or welcome) may come from whatever holds the port before rank 0 listens, so it costs
// a retry, and is reported when the deadline passes.
//
// `idle`, when given, does every wait instead of poll(2) and sleep: it waits until `fd` (-1:
// none) reports one of `events` (POLLIN / POLLOUT) or `until` passes, and returns the revents (0
// at `until`). A node leader passes its own loop, so that its local ranks' handshakes go on
// while it joins its parent instead of queueing behind that join. `stopped` ends the join early
// (the caller failed meanwhile and has its own error to report).
struct JoinWait {
    std::function<short(int fd, short events, Clock::time_point until)> idle;
    std::function<bool()> stopped;
};
// `secret` is cfg.secret keyed once (auth.hpp), shared by every attempt and connection.
Result<ParentLink> join_parent(const ParentTarget& target, const RendezvousConfig& cfg,
                               const HmacKey& secret, const std::string& host,
                               Clock::time_point deadline, const JoinWait& wait = {});

}  // namespace sddp::tcp
