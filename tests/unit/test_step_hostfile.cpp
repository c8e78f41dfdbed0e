// SPDX-License-Identifier: Apache-2.0
// --ddp=hostfile: the file every task of a node writes alike, rank 0's node first, at a path
// fixed by user, job, step and node id.
#include <gtest/gtest.h>

#include <string>

#include "core/slurm/step_hostfile.hpp"
#include "core/task/rank_order.hpp"

using namespace sddp;

namespace {

StepFacts two_nodes() {
    StepFacts f;
    f.job_id = 42;
    f.step_id = 7;
    f.nodes = {"n1", "n2"};
    f.tasks_per_node = {3, 2};
    f.ntasks = 5;
    f.nnodes = 2;
    f.nodeid = 1;
    f.node_name = "n2";
    return f;
}

}  // namespace

TEST(StepHostfile, PathNamesUserJobStepAndNode) {
    EXPECT_EQ(step_hostfile_path(1000, 42, 7, 3), "/tmp/slurm-ddp-hostfile.1000.42.7.3");
    EXPECT_NE(step_hostfile_path(1000, 42, 7, 0), step_hostfile_path(1000, 42, 7, 1));
}

TEST(StepHostfile, OneLinePerNodeWithItsTasks) {
    StepFacts f = two_nodes();
    f.distribution = "block";
    auto hf = step_hostfile(f, 0, 1000, std::nullopt);
    ASSERT_TRUE(hf.ok()) << hf.error().message;
    EXPECT_EQ(hf->text, "n1 slots=3\nn2 slots=2\n");
    EXPECT_EQ(hf->path, "/tmp/slurm-ddp-hostfile.1000.42.7.1");
}

TEST(StepHostfile, Rank0NodeFirstWhereverItIs) {
    StepFacts f = two_nodes();
    auto hf = step_hostfile(f, 1, 1000, std::nullopt);
    ASSERT_TRUE(hf.ok()) << hf.error().message;
    EXPECT_EQ(hf->text, "n2 slots=2\nn1 slots=3\n");
}

TEST(StepHostfile, Rank0NodeFromTheLayoutElseMasterAddr) {
    StepFacts f = two_nodes();
    f.distribution = "block";
    EXPECT_EQ(rank0_node(f, RankOrder::block, "n2", ""), 0u);  // the layout puts rank 0 on n1
    // An arbitrary distribution: the layout is in SLURM_HOSTFILE, so MASTER_ADDR names rank 0's
    // node, less the --ddp=addr-suffix.
    f.distribution = "arbitrary";
    EXPECT_EQ(rank0_node(f, RankOrder::block, "n2", ""), 1u);
    EXPECT_EQ(rank0_node(f, RankOrder::block, "n2-ib", "-ib"), 1u);
    EXPECT_EQ(rank0_node(f, RankOrder::block, "elsewhere", ""), 0u);
    // rank-order=node needs no distribution facts: rank 0 is on the first node.
    EXPECT_EQ(rank0_node(f, RankOrder::node, "n2", ""), 0u);
}

TEST(StepHostfile, LauncherSlotsReplaceTheTaskCounts) {
    StepFacts f = two_nodes();
    f.distribution = "block";
    auto hf = step_hostfile(f, 0, 0, 4u);
    ASSERT_TRUE(hf.ok()) << hf.error().message;
    EXPECT_EQ(hf->text, "n1 slots=4\nn2 slots=4\n");
}

TEST(StepHostfile, UnknownNodeListIsAnError) {
    StepFacts f = two_nodes();
    f.tasks_per_node = {3};
    auto hf = step_hostfile(f, 0, 0, std::nullopt);
    ASSERT_FALSE(hf.ok());
    EXPECT_NE(hf.error().message.find("--ddp=hostfile"), std::string::npos);
    EXPECT_FALSE(step_hostfile(two_nodes(), 2, 0, std::nullopt).ok());
}
