// SPDX-License-Identifier: Apache-2.0
#include "rendezvous/tcp/event_loop.hpp"

#include <poll.h>
#include <sys/epoll.h>

#include <algorithm>
#include <array>

namespace sddp::tcp {

// poll(2) reports readiness with the same bits: the owner sees one set of flags either way.
static_assert(POLLIN == EPOLLIN && POLLOUT == EPOLLOUT && POLLERR == EPOLLERR &&
              POLLHUP == EPOLLHUP);

Status EventLoop::open() {
    close();
    open_ = true;
    return ok_status();
}

void EventLoop::close() {
    open_ = false;
    writers_ = 0;
    polled_.clear();
    epoll_.reset();
}

bool EventLoop::add(int fd, std::uint32_t events, std::uint64_t id) {
    return set(fd, events, id, true);
}

void EventLoop::remove(int fd) {
    (void)set(fd, 0, 0, false);
}

void EventLoop::watch(int fd, std::uint64_t id, std::uint32_t& registered, std::uint32_t want) {
    if (want == registered) return;
    if (registered & EPOLLOUT) --writers_;
    if (want & EPOLLOUT) ++writers_;
    (void)set(fd, want, id, registered == 0);
    registered = want;
}

void EventLoop::unwatch(int fd, std::uint32_t& registered) {
    if (registered == 0) return;
    if (registered & EPOLLOUT) --writers_;
    (void)set(fd, 0, 0, false);
    registered = 0;
}

bool EventLoop::set(int fd, std::uint32_t events, std::uint64_t id, bool added) {
    if (!open_ || fd < 0) return false;
    if (epoll_.valid()) {
        epoll_event ev{};
        ev.events = events;
        ev.data.u64 = id;
        const int op = events == 0 ? EPOLL_CTL_DEL : added ? EPOLL_CTL_ADD : EPOLL_CTL_MOD;
        return ::epoll_ctl(epoll_.get(), op, fd, &ev) == 0;
    }
    // A descriptor number registered again was closed and reused (epoll would have dropped the
    // old registration at the close): the new registration replaces it.
    const auto it = std::find_if(polled_.begin(), polled_.end(),
                                 [fd](const Registration& r) { return r.fd == fd; });
    if (events == 0) {
        if (it != polled_.end()) polled_.erase(it);
        return true;
    }
    if (it != polled_.end()) {
        *it = Registration{fd, events, id};
        return true;
    }
    if (polled_.size() == kPollLimit && !move_to_epoll()) return false;
    if (epoll_.valid()) return set(fd, events, id, true);
    polled_.push_back(Registration{fd, events, id});
    return true;
}

bool EventLoop::move_to_epoll() {
    Fd ep(::epoll_create1(EPOLL_CLOEXEC));
    if (!ep.valid()) return false;
    for (const Registration& r : polled_) {
        epoll_event ev{};
        ev.events = r.events;
        ev.data.u64 = r.id;
        // A registration of a descriptor closed meanwhile is dropped, as epoll would have.
        (void)::epoll_ctl(ep.get(), EPOLL_CTL_ADD, r.fd, &ev);
    }
    polled_.clear();
    epoll_ = std::move(ep);
    return true;
}

std::span<const EventLoop::Ready> EventLoop::wait(Clock::time_point until, std::span<Ready> room) {
    if (!open_) return {};
    if (!epoll_.valid()) return poll_wait(until, room);
    epoll_event events[kMaxReady];
    const int max = static_cast<int>(std::min(room.size(), kMaxReady));
    const int n = ::epoll_wait(epoll_.get(), events, max, poll_timeout_ms(until));
    for (int i = 0; i < n; ++i) room[i] = Ready{events[i].data.u64, events[i].events};
    return room.first(n > 0 ? static_cast<std::size_t>(n) : 0);
}

std::span<const EventLoop::Ready> EventLoop::poll_wait(Clock::time_point until,
                                                       std::span<Ready> room) {
    for (;;) {
        // A copy: dropping a closed descriptor below changes the table.
        std::array<pollfd, kPollLimit> fds{};
        std::array<std::uint64_t, kPollLimit> ids{};
        const std::size_t count = polled_.size();
        for (std::size_t i = 0; i < count; ++i) {
            fds[i] = pollfd{polled_[i].fd, static_cast<short>(polled_[i].events), 0};
            ids[i] = polled_[i].id;
        }
        if (::poll(fds.data(), count, poll_timeout_ms(until)) <= 0) return {};
        std::size_t ready = 0;
        bool dropped = false;
        for (std::size_t i = 0; i < count && ready < room.size(); ++i) {
            const auto revents = static_cast<std::uint16_t>(fds[i].revents);
            if (revents & POLLNVAL) {
                // Closed while registered: dropped, as epoll would have, and not reported.
                (void)set(fds[i].fd, 0, 0, false);
                dropped = true;
            } else if (revents != 0) {
                room[ready++] = Ready{ids[i], revents};
            }
        }
        if (ready > 0 || !dropped || Clock::now() >= until) return room.first(ready);
    }
}

}  // namespace sddp::tcp
