// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include "core/task/requeue_marker.hpp"

using namespace sddp;

TEST(RequeueMarker, NameCarriesJobRunAndNode) {
    const auto name = requeue_marker_name({4242, 3, "n1"});
    ASSERT_TRUE(name) << name.error().message;
    EXPECT_EQ(*name, "requeue.4242.3.n1");
    const auto back = parse_requeue_marker_name(*name);
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(back->job_id, 4242u);
    EXPECT_EQ(back->restart_count, 3u);
    EXPECT_EQ(back->node, "n1");
    const auto dotted = parse_requeue_marker_name("requeue.7.0.gpu-01.cluster");
    ASSERT_TRUE(dotted.has_value());
    EXPECT_EQ(dotted->node, "gpu-01.cluster");
}

TEST(RequeueMarker, NodeNamesThatCannotBeFileNamesAreRefused) {
    for (const char* bad : {"", "../etc", "n1/x", "n 1", "n\n1"}) {
        const auto name = requeue_marker_name({1, 0, bad});
        ASSERT_FALSE(name) << bad;
        EXPECT_NE(name.error().message.find("SLURMD_NODENAME"), std::string::npos);
    }
    EXPECT_FALSE(requeue_marker_name({1, 0, std::string(65, 'n')}));
    EXPECT_TRUE(requeue_marker_name({1, 0, std::string(64, 'n')}));
}

TEST(RequeueMarker, OtherNamesAreNotMarkers) {
    for (const char* other : {"requeue.", "requeue.1", "requeue.1.2", "requeue.x.0.n1",
                              "requeue.1.y.n1", "requeue.1.2.", "slurm-ddp-requeue.1",
                              "requeue.1.2.a/b", "requeue.-1.0.n1", "requeue.99999999999.0.n1"}) {
        EXPECT_FALSE(parse_requeue_marker_name(other).has_value()) << other;
    }
}

TEST(RequeueMarker, RestartCountAsSlurmSetsIt) {
    EXPECT_EQ(restart_count_of(std::nullopt), 0u);
    EXPECT_EQ(restart_count_of("2"), 2u);
    EXPECT_EQ(restart_count_of("two"), 0u);
    EXPECT_EQ(restart_count_of("-1"), 0u);
}

TEST(RequeueMarker, TheBatchScriptRunsOnTheJobsFirstNode) {
    EXPECT_TRUE(is_first_node_of_job("n[1-4]", "n1"));
    EXPECT_FALSE(is_first_node_of_job("n[1-4]", "n2"));
    EXPECT_TRUE(is_first_node_of_job("gpu[07-09],cpu1", "gpu07"));
    EXPECT_FALSE(is_first_node_of_job("gpu[07-09]", "gpu7"));
    EXPECT_FALSE(is_first_node_of_job("", "n1"));
    EXPECT_FALSE(is_first_node_of_job("n[1-", "n1"));
    EXPECT_FALSE(is_first_node_of_job("n1", ""));
}
