// SPDX-License-Identifier: Apache-2.0
// What the collectives see of the rendezvous tree once it stands: this rank's parent and child
// links, frames sent down them and received from them, and one turn of the loop at a time.
// Nothing of how the tree was built (handshakes, admission, who has joined) shows through.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/bytes.hpp"
#include "core/base/result.hpp"
#include "rendezvous/tcp/connection.hpp"
#include "rendezvous/tcp/socket.hpp"

namespace sddp::tcp {

class TreeLinks {
  public:
    using LinkId = std::uint64_t;

    // "rank 3 (host)": the prefix of every error this rank originates.
    virtual const std::string& self() const = 0;
    // The link to this rank's parent; none on rank 0.
    virtual std::optional<LinkId> parent() const = 0;
    // The links to this rank's children, in the order they joined.
    virtual std::vector<LinkId> children() const = 0;

    // Queues `frame` to the peer and sends what the socket takes now.
    virtual void send(LinkId link, std::shared_ptr<const Bytes> frame) = 0;
    // The oldest collective frame (up from a child, down from the parent) that arrived on `link`
    // and was not taken yet.
    virtual std::optional<OwnedFrame> receive(LinkId link) = 0;
    // The peer closed its end: nothing more will arrive from it.
    virtual bool closed(LinkId link) const = 0;
    // The peer, for messages, and the ranks reached through it.
    virtual std::string describe(LinkId link) const = 0;
    virtual std::vector<int> ranks_behind(LinkId link) const = 0;

    // Runs the loop once, until something happens or `until` passes; the links that saw events,
    // valid until the next turn.
    virtual const std::vector<LinkId>& turn(Clock::time_point until) = 0;
    // Runs the loop until every queued byte has left, or fails naming the slow peers.
    virtual Status drain(Clock::time_point deadline, std::string_view during) = 0;
    // When a wait started at `start` gives up (a server gives up a little before its children).
    virtual Clock::time_point deadline_from(Clock::time_point start) const = 0;

    // Fails the rendezvous: every peer but `from` is told, and every later call returns `e`.
    virtual Error fail(Error e, std::optional<LinkId> from = std::nullopt) = 0;
    // The failure, once there is one.
    virtual const std::optional<Error>& failure() const = 0;

  protected:
    TreeLinks() = default;
    ~TreeLinks() = default;
    TreeLinks(const TreeLinks&) = default;
    TreeLinks& operator=(const TreeLinks&) = default;
};

}  // namespace sddp::tcp
