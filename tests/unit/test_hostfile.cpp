// SPDX-License-Identifier: Apache-2.0
// Slurm's host file (SLURM_HOSTFILE): parsed within the step's size, and trusted for rank 0's
// host only when it describes the step this task is in.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/slurm/hostfile.hpp"

using namespace sddp;

namespace {

std::vector<HostRun> runs_of(const char* text, std::uint32_t max_ranks = 64) {
    auto r = parse_hostfile(text, max_ranks);
    EXPECT_TRUE(r.ok()) << r.error().message;
    return r.ok() ? *r : std::vector<HostRun>{};
}

// Two nodes, three tasks: n2 runs ranks 0-1, n1 rank 2; this task is rank 2 on n1.
StepFacts arbitrary_step() {
    StepFacts f;
    f.nodes = {"n1", "n2"};
    f.tasks_per_node = {1, 2};
    f.ntasks = 3;
    f.nnodes = 2;
    f.procid = 2;
    f.node_name = "n1";
    return f;
}

}  // namespace

TEST(Hostfile, ListsCountsAndComments) {
    const auto runs = runs_of("# rank 0 first\nn2*2\n\n  n1 # the last\n");
    ASSERT_EQ(runs.size(), 2u);
    EXPECT_EQ(runs[0].host, "n2");
    EXPECT_EQ(runs[0].count, 2u);
    EXPECT_EQ(runs[1].host, "n1");
    EXPECT_EQ(runs[1].count, 1u);
    // A host list is one rank per host; repeats of one host merge into a run.
    const auto list = runs_of("n[1-2],n2,n2");
    ASSERT_EQ(list.size(), 2u);
    EXPECT_EQ(list[1].host, "n2");
    EXPECT_EQ(list[1].count, 3u);
}

TEST(Hostfile, StopsAtTheStepsRanks) {
    // Lines after the step's last rank are not read.
    const auto runs = runs_of("n1*6\nn2*2\nn3\nnot a host list [\n", 8);
    ASSERT_EQ(runs.size(), 2u);
    EXPECT_EQ(runs[1].host, "n2");
    EXPECT_EQ(runs[1].count, 2u);
}

TEST(Hostfile, ListLongerThanTheRanksLeftIsRefusedNotExpanded) {
    auto r = parse_hostfile("n1\nn[0-999999]\n", 3);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, Errc::too_large);
    EXPECT_NE(r.error().message.find("line 2"), std::string::npos) << r.error().message;
}

TEST(Hostfile, CountAboveTheStepIsRefused) {
    auto r = parse_hostfile("n1*4000000000\n", 8);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("a count from 1 to 8"), std::string::npos)
        << r.error().message;
}

TEST(Hostfile, BadLinesNameTheLine) {
    for (const char* bad : {"n1\nn2*0\n", "n1\nn2*x\n", "n1\nn[1-2]*2\n"}) {
        auto r = parse_hostfile(bad, 16);
        ASSERT_FALSE(r.ok()) << bad;
        EXPECT_NE(r.error().message.find("line 2"), std::string::npos) << r.error().message;
    }
}

TEST(Hostfile, Rank0HostWhenTheFileDescribesTheStep) {
    auto host = hostfile_rank0_host(arbitrary_step(), runs_of("n2*2\nn1\n"), "/tmp/hf");
    ASSERT_TRUE(host.ok()) << host.error().message;
    EXPECT_EQ(*host, "n2");
}

TEST(Hostfile, RefusedWhenItDoesNotDescribeTheStep) {
    const StepFacts f = arbitrary_step();
    // Too few ranks.
    auto few = hostfile_rank0_host(f, runs_of("n2*2\n"), "/tmp/hf");
    ASSERT_FALSE(few.ok());
    EXPECT_NE(few.error().message.find("places 2 rank(s) but the step has 3"), std::string::npos);
    // This task's rank on another host.
    auto moved = hostfile_rank0_host(f, runs_of("n1\nn2*2\n"), "/tmp/hf");
    ASSERT_FALSE(moved.ok());
    EXPECT_NE(moved.error().message.find("puts rank 2 on 'n2'"), std::string::npos);
    // Per-node counts other than Slurm's.
    StepFacts g = f;
    g.procid = 0;
    g.node_name = "n2";
    auto counts = hostfile_rank0_host(g, runs_of("n2\nn1*2\n"), "/tmp/hf");
    ASSERT_FALSE(counts.ok());
    EXPECT_NE(counts.error().message.find("Slurm started"), std::string::npos);
}
