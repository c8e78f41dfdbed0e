// SPDX-License-Identifier: Apache-2.0
// The descriptors a rendezvous node waits on: registered under ids of the caller's choosing, one
// bounded wait at a time, and how many of them wait to write. It knows nothing of links,
// handshakes or collectives: its owner dispatches the ready ids.
//
// A few descriptors (a local rank's one link, a node leader's locals) are waited on with poll(2);
// the set moves to epoll once it grows past kPollLimit (rank 0 of a large job). Most ranks thus
// never create an epoll instance, and every change of interest is a write to a table here
// instead of an epoll_ctl system call. Either way the readiness is level-triggered and reported
// with the EPOLL* flags. As with epoll, closing a registered descriptor drops its registration.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/base/result.hpp"
#include "rendezvous/tcp/socket.hpp"

namespace sddp::tcp {

class EventLoop {
  public:
    struct Ready {
        std::uint64_t id = 0;
        std::uint32_t events = 0;  // EPOLLIN, EPOLLOUT, EPOLLERR, EPOLLHUP
    };

    Status open();
    bool valid() const { return open_; }
    // Forgets every registration (the descriptors themselves belong to the caller).
    void close();

    // Registers `fd` under `id` for `events`; false if epoll refused it.
    bool add(int fd, std::uint32_t events, std::uint64_t id);
    void remove(int fd);
    // Moves `fd`'s registration from `registered` (0: none) to `want` (0: none), and counts the
    // descriptors registered for EPOLLOUT. `registered` is the caller's record of the last call.
    void watch(int fd, std::uint64_t id, std::uint32_t& registered, std::uint32_t want);
    // Drops `fd`'s registration made through watch(), if any.
    void unwatch(int fd, std::uint32_t& registered);
    // Descriptors registered through watch() with EPOLLOUT: bytes still waiting to leave.
    std::size_t writers() const { return writers_; }

    // Waits until a registered descriptor is ready or `until` passes; what is ready, in `room`
    // (at most kMaxReady at a time). The caller's buffer keeps a wait made while dispatching
    // another's events from overwriting them.
    static constexpr std::size_t kMaxReady = 256;
    std::span<const Ready> wait(Clock::time_point until, std::span<Ready> room);

  private:
    static constexpr std::size_t kPollLimit = 16;

    struct Registration {
        int fd = -1;
        std::uint32_t events = 0;
        std::uint64_t id = 0;
    };
    // Registers (`added`: not registered yet), changes (events != 0) or drops (events == 0)
    // `fd`; false if epoll refused.
    bool set(int fd, std::uint32_t events, std::uint64_t id, bool added);
    bool move_to_epoll();
    std::span<const Ready> poll_wait(Clock::time_point until, std::span<Ready> room);

    bool open_ = false;
    std::vector<Registration> polled_;  // until the set moves to epoll
    Fd epoll_;
    std::size_t writers_ = 0;
};

}  // namespace sddp::tcp
