// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include "rendezvous/protocol/admission.hpp"

using namespace sddp;
using std::chrono::milliseconds;
using T = Admission::Clock::time_point;

TEST(Admission, AdmitsUntilFullThenEvictsTheBusiestAddressOldestFirst) {
    Admission a(4, milliseconds(1000));
    const T t0{};
    for (Admission::Id id = 1; id <= 3; ++id) {
        EXPECT_FALSE(a.arrive(id, "flood", t0).evict);
    }
    EXPECT_FALSE(a.arrive(4, "node1", t0).evict);
    EXPECT_EQ(a.pending(), 4u);
    // Full: a newcomer from anywhere evicts the flooder's oldest, never node1's.
    const auto d = a.arrive(5, "node2", t0);
    ASSERT_TRUE(d.evict);
    EXPECT_EQ(*d.evict, 1u);
    EXPECT_TRUE(d.report);
    for (Admission::Id id = 6; id < 50; ++id) {
        const auto e = a.arrive(id, "flood", t0);
        ASSERT_TRUE(e.evict);
        EXPECT_NE(*e.evict, 4u);
        EXPECT_NE(*e.evict, 5u);
        EXPECT_FALSE(e.report);  // reported once per address
    }
    EXPECT_EQ(a.pending_from("node1"), 1u);
    EXPECT_EQ(a.pending_from("node2"), 1u);
    EXPECT_EQ(a.pending(), 4u);
    EXPECT_EQ(a.evicted(), 45u);
}

TEST(Admission, AFlooderSharingAnAddressGivesANewcomerTheWholeTableToAnswer) {
    Admission a(8, milliseconds(1000));
    const T t0{};
    for (Admission::Id id = 1; id <= 8; ++id) a.arrive(id, "h", t0);
    a.arrive(100, "h", t0);  // the real rank, from the flooder's host
    // It survives the next 7 arrivals from that host and goes on the 8th.
    for (Admission::Id id = 101; id < 108; ++id) EXPECT_NE(*a.arrive(id, "h", t0).evict, 100u);
    EXPECT_EQ(*a.arrive(108, "h", t0).evict, 100u);
}

TEST(Admission, LeaveFreesTheSlotAndDeadlinesExpireInOrder) {
    Admission a(4, milliseconds(1000));
    const T t0{};
    a.arrive(1, "a", t0);
    a.arrive(2, "a", t0 + milliseconds(100));
    a.arrive(3, "b", t0 + milliseconds(200));
    EXPECT_EQ(a.next_deadline(), t0 + milliseconds(1000));
    a.leave(1);
    a.leave(1);  // twice is harmless
    EXPECT_EQ(a.next_deadline(), t0 + milliseconds(1100));
    EXPECT_TRUE(a.expire(t0 + milliseconds(1099)).empty());
    const auto gone = a.expire(t0 + milliseconds(1250));
    ASSERT_EQ(gone.size(), 2u);
    EXPECT_EQ(gone[0].id, 2u);
    EXPECT_TRUE(gone[0].report);
    EXPECT_EQ(gone[1].id, 3u);
    EXPECT_EQ(gone[1].address, "b");
    EXPECT_EQ(a.pending(), 0u);
    EXPECT_EQ(a.next_deadline(), Admission::Clock::time_point::max());
    a.arrive(4, "a", t0 + milliseconds(2000));
    EXPECT_FALSE(a.expire(t0 + milliseconds(4000))[0].report);  // "a" was reported already
}
