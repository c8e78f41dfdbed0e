// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <climits>
#include <cstdint>

#include "rendezvous/protocol/join_accounting.hpp"

using namespace sddp;

TEST(JoinAccounting, RootCountsLeadersAndTheirLocals) {
    // 8 ranks, 2 nodes of 4: rank 0 leads node 0, rank 4 leads node 1.
    JoinAccounting j(true, 8, 4, 0, 0);
    EXPECT_FALSE(j.complete());
    EXPECT_EQ(j.missing_ranks(), (std::vector<int>{1, 2, 3, 4, 5, 6, 7}));
    EXPECT_EQ(j.check_direct(4, 0, 4), std::nullopt);
    j.add_direct(100, 4, 4);
    for (int r : {1, 2, 3}) {
        EXPECT_EQ(j.check_local(r, r, 4, 0), std::nullopt);
        j.add_local(200 + static_cast<std::uint64_t>(r), r, r);
    }
    EXPECT_EQ(j.report_local(100, 5), std::nullopt);
    ASSERT_EQ(j.incomplete_leaders().size(), 1u);
    EXPECT_EQ(j.incomplete_leaders()[0].second.locals_joined, 1);
    EXPECT_EQ(j.report_local(100, 6), std::nullopt);
    EXPECT_EQ(j.report_local(100, 7), std::nullopt);
    EXPECT_TRUE(j.complete());
    EXPECT_TRUE(j.incomplete_leaders().empty());
    EXPECT_EQ(j.ranks_via(100), (std::vector<int>{4, 5, 6, 7}));
}

TEST(JoinAccounting, RefusesDuplicatesAndStrangers) {
    JoinAccounting j(true, 4, 1, 0, 0);
    EXPECT_NE(j.check_direct(0, 0, 1)->find("is this rank"), std::string::npos);
    EXPECT_NE(j.check_direct(4, 0, 1)->find("out of range"), std::string::npos);
    EXPECT_NE(j.check_direct(-1, 0, 1)->find("out of range"), std::string::npos);
    EXPECT_NE(j.check_direct(2, 1, 2)->find("must join through its node leader"),
              std::string::npos);
    j.add_direct(7, 2, 1);
    EXPECT_NE(j.check_direct(2, 0, 1)->find("duplicate rank 2"), std::string::npos);
    // A direct peer is no leader: it cannot report locals.
    EXPECT_TRUE(j.report_local(7, 3).has_value());
    // A leader cannot report more locals than it has, nor a rank already in.
    j.add_direct(8, 1, 2);
    EXPECT_TRUE(j.report_local(8, 2).has_value());
    EXPECT_EQ(j.report_local(8, 3), std::nullopt);
    EXPECT_TRUE(j.report_local(8, 3).has_value());
    EXPECT_TRUE(j.complete());
}

TEST(JoinAccounting, HugeLocalWorldSizeDoesNotOverflow) {
    // An authenticated peer claiming INT_MAX local ranks: `known + lws` would overflow (UBSan
    // traps on it in the sanitizer build); the check must refuse it as too many.
    JoinAccounting j(true, 16, 1, 0, 0);
    j.add_direct(5, 1, 1);
    for (int lws : {INT_MAX, INT_MAX - 1, 16, 15}) {
        const auto why = j.check_direct(3, 0, lws);
        ASSERT_TRUE(why.has_value()) << lws;
        EXPECT_NE(why->find("more than the 14 still expected"), std::string::npos) << *why;
    }
    EXPECT_EQ(j.check_direct(3, 0, 14), std::nullopt);
}

TEST(JoinAccounting, NodeLeaderTracksItsLocals) {
    JoinAccounting j(false, 8, 4, 4, 1);
    EXPECT_EQ(j.missing_local_ranks(), (std::vector<int>{1, 2, 3}));
    EXPECT_NE(j.check_local(5, 1, 4, 0)->find("does not belong to node 1"), std::string::npos);
    EXPECT_NE(j.check_local(5, 1, 3, 1)->find("does not belong"), std::string::npos);
    EXPECT_NE(j.check_local(5, 0, 4, 1)->find("does not belong"), std::string::npos);
    EXPECT_NE(j.check_local(5, 4, 4, 1)->find("does not belong"), std::string::npos);
    EXPECT_EQ(j.check_local(5, 1, 4, 1), std::nullopt);
    j.add_local(1, 5, 1);
    EXPECT_NE(j.check_local(6, 1, 4, 1)->find("duplicate local rank 1"), std::string::npos);
    EXPECT_NE(j.check_local(5, 2, 4, 1)->find("duplicate rank 5"), std::string::npos);
    EXPECT_NE(j.check_direct(6, 0, 1)->find("does not accept TCP"), std::string::npos);
    j.add_local(2, 6, 2);
    EXPECT_FALSE(j.complete());
    j.add_local(3, 7, 3);
    EXPECT_TRUE(j.complete());
    EXPECT_TRUE(j.missing_local_ranks().empty());
}
