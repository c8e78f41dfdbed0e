// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cstdint>

#include "rendezvous/protocol/join_pacing.hpp"

using namespace sddp;
using std::chrono::microseconds;

TEST(JoinPacing, FirstBatchNeverWaits) {
    for (std::uint32_t n : {0u, 1u, 100u, 2047u}) EXPECT_EQ(join_delay(n, 4096), microseconds(0));
    EXPECT_GT(join_delay(2048, 4096), microseconds(0));
}

TEST(JoinPacing, BatchesOfHalfTheBacklogAtTheAdmissionRate) {
    // somaxconn 4096: 2048 leaders per batch, each batch 2048 admission slots later.
    EXPECT_EQ(join_delay(2048, 4096), 2048 * kAdmitCost);
    EXPECT_EQ(join_delay(4095, 4096), 2048 * kAdmitCost);
    EXPECT_EQ(join_delay(4096, 4096), 4096 * kAdmitCost);
    // 12.5k leaders (100k ranks, 8 per node): the last waits about as long as admitting all.
    EXPECT_LE(join_delay(12499, 4096), 12500 * kAdmitCost);
    EXPECT_GE(join_delay(12499, 4096), 10000 * kAdmitCost);
    // An old kernel's somaxconn of 128: smaller batches, the same overall rate.
    EXPECT_EQ(join_delay(64, 128), 64 * kAdmitCost);
    EXPECT_LE(join_delay(12499, 128), 12500 * kAdmitCost);
}

TEST(JoinPacing, NondecreasingAndSaneForTinyBacklogs) {
    for (std::uint32_t backlog : {0u, 1u, 16u, 128u, 4096u, 65535u}) {
        microseconds last{0};
        for (std::uint32_t n = 0; n < 40000; n += 7) {
            const microseconds d = join_delay(n, backlog);
            EXPECT_GE(d, last);
            EXPECT_LE(d, microseconds(static_cast<long>(n) + 1) * kAdmitCost.count());
            last = d;
        }
    }
}

TEST(JoinPacing, RetryPauseStaysWithinAQuarterOfTheWait) {
    const microseconds first(1000);
    // At the start: the first pause, whatever the backoff says.
    EXPECT_EQ(retry_pause(first, microseconds(0), first), first);
    // 8 ms waited, backoff already at 64 ms: 2 ms, not 64 (the parent may listen any moment).
    EXPECT_EQ(retry_pause(microseconds(64000), microseconds(8000), first), microseconds(2000));
    // A long wait: the backoff (the caller's cap) rules again.
    EXPECT_EQ(retry_pause(microseconds(1000000), microseconds(60000000), first),
              microseconds(1000000));
    for (long w = 0; w < 10000000; w += 997) {
        const microseconds p = retry_pause(microseconds(1000000), microseconds(w), first);
        EXPECT_GE(p, first);
        EXPECT_LE(p, std::max(first, microseconds(w / 4)));
    }
}
