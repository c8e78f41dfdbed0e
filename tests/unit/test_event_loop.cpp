// SPDX-License-Identifier: Apache-2.0
// EventLoop: a few descriptors are waited on with poll(2), more with epoll, and the owner sees
// the same thing either way: level-triggered readiness under its own ids, and a closed
// descriptor's registration gone, as epoll drops it.
#include <gtest/gtest.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <vector>

#include "rendezvous/tcp/event_loop.hpp"

using namespace sddp;
using namespace sddp::tcp;

namespace {

struct Pair {
    Fd a, b;
};

Pair socket_pair() {
    int fds[2] = {-1, -1};
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
    return Pair{Fd(fds[0]), Fd(fds[1])};
}

std::set<std::uint64_t> ready_ids(EventLoop& loop, std::uint32_t events, int ms = 0) {
    EventLoop::Ready room[EventLoop::kMaxReady];
    std::set<std::uint64_t> ids;
    const auto until = Clock::now() + std::chrono::milliseconds(ms);
    for (const EventLoop::Ready& r : loop.wait(until, room)) {
        if (r.events & events) ids.insert(r.id);
    }
    return ids;
}

// `count` socket pairs registered for input under ids 100 + i; every other one readable.
void check_many(int count) {
    EventLoop loop;
    ASSERT_TRUE(loop.open().ok());
    std::vector<Pair> pairs;
    for (int i = 0; i < count; ++i) {
        pairs.push_back(socket_pair());
        ASSERT_TRUE(loop.add(pairs.back().a.get(), EPOLLIN, 100 + static_cast<std::uint64_t>(i)));
    }
    EXPECT_TRUE(ready_ids(loop, EPOLLIN).empty()) << "nothing written yet";
    std::set<std::uint64_t> want;
    for (int i = 0; i < count; i += 2) {
        ASSERT_EQ(::write(pairs[static_cast<std::size_t>(i)].b.get(), "x", 1), 1);
        want.insert(100 + static_cast<std::uint64_t>(i));
    }
    EXPECT_EQ(ready_ids(loop, EPOLLIN, 1000), want) << count << " descriptors";
    // Level-triggered: unread input is reported again.
    EXPECT_EQ(ready_ids(loop, EPOLLIN), want);
    loop.remove(pairs[0].a.get());
    want.erase(100);
    EXPECT_EQ(ready_ids(loop, EPOLLIN), want) << "a removed descriptor is still reported";
}

}  // namespace

TEST(EventLoop, ReportsTheReadyUnderTheirIdsWithPollAndWithEpoll) {
    check_many(3);   // poll(2)
    check_many(40);  // past the poll limit: moved to epoll on the way
}

TEST(EventLoop, WatchCountsWritersAndReportsHangUps) {
    EventLoop loop;
    ASSERT_TRUE(loop.open().ok());
    Pair p = socket_pair();
    std::uint32_t registered = 0;
    loop.watch(p.a.get(), 7, registered, EPOLLIN | EPOLLOUT);
    EXPECT_EQ(loop.writers(), 1u);
    EXPECT_EQ(ready_ids(loop, EPOLLOUT), std::set<std::uint64_t>{7})
        << "an idle socket is writable";
    loop.watch(p.a.get(), 7, registered, EPOLLIN);
    EXPECT_EQ(loop.writers(), 0u);
    EXPECT_TRUE(ready_ids(loop, EPOLLOUT).empty());
    p.b.reset();  // the peer goes: hang-up without having asked for it
    EXPECT_EQ(ready_ids(loop, EPOLLHUP | EPOLLIN, 1000), std::set<std::uint64_t>{7});
    loop.unwatch(p.a.get(), registered);
    EXPECT_EQ(registered, 0u);
    EXPECT_TRUE(ready_ids(loop, EPOLLHUP | EPOLLIN).empty());
}

TEST(EventLoop, AClosedDescriptorIsDroppedAndItsNumberReusedCleanly) {
    EventLoop loop;
    ASSERT_TRUE(loop.open().ok());
    Pair first = socket_pair();
    const int number = first.a.get();
    ASSERT_TRUE(loop.add(number, EPOLLIN, 1));
    first.a.reset();  // closed while registered, as epoll allows
    const auto start = Clock::now();
    EXPECT_TRUE(ready_ids(loop, ~0u, 50).empty()) << "a closed descriptor was reported";
    EXPECT_GE(Clock::now() - start, std::chrono::milliseconds(40)) << "the wait did not wait";
    // The same number again, for a new socket under a new id: only the new id is reported.
    Pair second = socket_pair();
    ASSERT_EQ(second.a.get(), number) << "the kernel did not reuse the number";
    ASSERT_TRUE(loop.add(number, EPOLLIN, 2));
    ASSERT_EQ(::write(second.b.get(), "x", 1), 1);
    EXPECT_EQ(ready_ids(loop, EPOLLIN, 1000), std::set<std::uint64_t>{2});
}

TEST(EventLoop, AClosedLoopNeitherWaitsNorRegisters) {
    EventLoop loop;
    Pair p = socket_pair();
    EXPECT_FALSE(loop.valid());
    EXPECT_FALSE(loop.add(p.a.get(), EPOLLIN, 1));
    ASSERT_TRUE(loop.open().ok());
    ASSERT_TRUE(loop.add(p.a.get(), EPOLLIN, 1));
    loop.close();
    const auto start = Clock::now();
    EXPECT_TRUE(ready_ids(loop, ~0u, 2000).empty());
    EXPECT_LT(Clock::now() - start, std::chrono::milliseconds(500)) << "a closed loop waited";
}
