// SPDX-License-Identifier: Apache-2.0
// Admission control for unauthenticated connections: how many may wait in the handshake, for
// how long, and whom to drop when a flood fills the table. Pure bookkeeping over opaque ids and
// peer addresses; the event loop does the accepting and closing.
//
// Policy. Every pending handshake has a deadline. The table has a fixed number of slots; when a
// connection arrives and the table is full, the oldest pending connection of the address that
// holds the most slots is evicted and the newcomer admitted. One host opening sockets as fast as
// it can therefore only ever evicts its own, and a peer from any other address gets a slot at
// once; a peer that shares the flooder's address still gets a slot and keeps it for as long as
// the flood needs to cycle through the whole table, far longer than a real rank needs to answer
// the challenge. Peers that answer are out of the table (authenticated or refused) at once.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace sddp {

class Admission {
  public:
    using Clock = std::chrono::steady_clock;
    using Id = std::uint64_t;  // must increase with every connection (arrival order)

    Admission(std::size_t slots, Clock::duration handshake_timeout);

    struct Decision {
        std::optional<Id> evict;  // close this pending connection first
        // The first time connections from this address are dropped (evicted or expired): the
        // caller reports it once, then counts silently.
        bool report = false;
    };
    // A connection `id` from `address` was accepted at `now`; it is admitted in every case.
    Decision arrive(Id id, const std::string& address, Clock::time_point now);
    // The handshake ended (authenticated, refused, or the peer closed): frees the slot.
    void leave(Id id);

    struct Expired {
        Id id = 0;
        std::string address;
        bool report = false;  // see Decision::report
    };
    // Removes and returns the connections whose deadline has passed.
    std::vector<Expired> expire(Clock::time_point now);
    // The earliest deadline, or time_point::max() when nothing is pending.
    Clock::time_point next_deadline() const;

    std::size_t pending() const { return entries_.size(); }
    std::size_t pending_from(const std::string& address) const;
    std::size_t evicted() const { return evicted_; }
    std::size_t expired_count() const { return expired_; }
    Clock::duration handshake_timeout() const { return timeout_; }

  private:
    struct Entry {
        std::string address;
        Clock::time_point deadline;
    };
    bool first_drop(const std::string& address);
    void erase(std::map<Id, Entry>::iterator it);

    std::size_t slots_;
    Clock::duration timeout_;
    std::map<Id, Entry> entries_;  // by id: arrival order, hence deadline order
    std::map<std::string, std::set<Id>> by_address_;
    std::set<std::string> reported_;
    std::size_t evicted_ = 0;
    std::size_t expired_ = 0;
};

}  // namespace sddp
