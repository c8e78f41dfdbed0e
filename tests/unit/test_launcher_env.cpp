// SPDX-License-Identifier: Apache-2.0
// --ddp=launcher: one task per node gets the variables torchrun needs, and all the node's GPUs.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "core/task/launch_env.hpp"
#include "core/task/launcher_env.hpp"
#include "step_vars.hpp"

using namespace sddp;
using namespace sddp::unit;

// ---- launcher --------------------------------------------------------------------------------

TEST(Launcher, TorchrunVariablesAndNoPerRankOnes) {
    auto f = facts_of(task(1, 0, 1, 2, "n[1-2]", 2, "1(x2)", "n2"));
    auto o = opts_of("launcher,port=29500");
    auto e = derive_launch_env(f, o, {});
    ASSERT_TRUE(e.ok());
    auto l = derive_launcher_env(f, *e, o, 4u);
    ASSERT_TRUE(l.ok()) << l.error().message;
    auto m = as_map(l->vars);
    EXPECT_EQ(m["PET_NNODES"], "2");
    EXPECT_EQ(m["PET_NODE_RANK"], "1");
    EXPECT_EQ(m["PET_NPROC_PER_NODE"], "4");
    EXPECT_EQ(l->nproc_source, "gpus");
    EXPECT_EQ(m["PET_MASTER_ADDR"], "n1");
    EXPECT_EQ(m["PET_MASTER_PORT"], "29500");
    EXPECT_EQ(m["PET_RDZV_BACKEND"], "static");
    EXPECT_EQ(m["SLURM_DDP_NUM_PROCESSES"], "8");
    for (const auto& name : launcher_omitted_names()) EXPECT_EQ(m.count(name), 0u) << name;
    EXPECT_EQ(m["MASTER_ADDR"], "n1");

    auto o3 = opts_of("launcher,nproc=3");
    auto l3 = derive_launcher_env(f, *e, o3, 4u);
    EXPECT_EQ(as_map(l3->vars)["PET_NPROC_PER_NODE"], "3");
    auto l1 = derive_launcher_env(f, *e, o, std::nullopt);
    EXPECT_EQ(as_map(l1->vars)["PET_NPROC_PER_NODE"], "1");
}

TEST(Launcher, RefusedWithTwoTasksOnANode) {
    auto f = facts_of(task(0, 0, 0, 3, "n[1-2]", 2, "1,2", "n1"));
    auto o = opts_of("launcher");
    auto e = derive_launch_env(f, o, {});
    ASSERT_TRUE(e.ok());
    auto l = derive_launcher_env(f, *e, o, std::nullopt);
    ASSERT_FALSE(l.ok());
    EXPECT_NE(l.error().message.find("'n2' runs 2 tasks"), std::string::npos) << l.error().message;
    EXPECT_NE(l.error().message.find("--ntasks-per-node=1"), std::string::npos);
}

TEST(Launcher, GivesTheLauncherAllStepGpus) {
    EXPECT_EQ(
        as_map(launcher_gpu_env(std::string("0,1,2,3"), std::string("0")))["CUDA_VISIBLE_DEVICES"],
        "0,1,2,3");
    EXPECT_TRUE(launcher_gpu_env(std::string("0,1"), std::string("0,1")).empty());
    EXPECT_TRUE(launcher_gpu_env(std::nullopt, std::string("0")).empty());
}
