// SPDX-License-Identifier: Apache-2.0
#include "rendezvous/tcp/event_loop.hpp"

#include <sys/epoll.h>

#include <algorithm>
#include <cerrno>

namespace sddp::tcp {

Status EventLoop::open() {
    epoll_ = Fd(::epoll_create1(EPOLL_CLOEXEC));
    if (!epoll_.valid()) return make_error(Errc::io, "epoll_create1: " + errno_text(errno));
    writers_ = 0;
    return ok_status();
}

void EventLoop::close() {
    writers_ = 0;
    epoll_.reset();
}

bool EventLoop::add(int fd, std::uint32_t events, std::uint64_t id) {
    epoll_event ev{};
    ev.events = events;
    ev.data.u64 = id;
    return ::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd, &ev) == 0;
}

void EventLoop::remove(int fd) {
    ::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, fd, nullptr);
}

void EventLoop::watch(int fd, std::uint64_t id, std::uint32_t& registered, std::uint32_t want) {
    if (want == registered) return;
    if (registered & EPOLLOUT) --writers_;
    if (want & EPOLLOUT) ++writers_;
    epoll_event ev{};
    ev.events = want;
    ev.data.u64 = id;
    const int op = registered == 0 ? EPOLL_CTL_ADD : (want == 0 ? EPOLL_CTL_DEL : EPOLL_CTL_MOD);
    ::epoll_ctl(epoll_.get(), op, fd, &ev);
    registered = want;
}

void EventLoop::unwatch(int fd, std::uint32_t& registered) {
    if (registered == 0) return;
    if (registered & EPOLLOUT) --writers_;
    ::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, fd, nullptr);
    registered = 0;
}

std::span<const EventLoop::Ready> EventLoop::wait(Clock::time_point until, std::span<Ready> room) {
    epoll_event events[kMaxReady];
    const int max = static_cast<int>(std::min(room.size(), kMaxReady));
    const int n = ::epoll_wait(epoll_.get(), events, max, poll_timeout_ms(until));
    for (int i = 0; i < n; ++i) room[i] = Ready{events[i].data.u64, events[i].events};
    return room.first(n > 0 ? static_cast<std::size_t>(n) : 0);
}

}  // namespace sddp::tcp
