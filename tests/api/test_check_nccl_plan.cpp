// SPDX-License-Identifier: Apache-2.0
// plan_nccl: whether `slurm-ddp check --nccl` runs the all-reduce, and the line it prints.
#include <gtest/gtest.h>

#include "check/check_nccl_plan.hpp"

using namespace sddp;
using sddp::check::plan_nccl;

namespace {

const nccl::LoadedLibraries kWheel{"/venv/site-packages/nvidia/nccl/lib/libnccl.so.2", "2.28.9",
                                   "/venv/site-packages/nvidia/cu13/lib/libcudart.so.13"};

}  // namespace

TEST(CheckNcclPlan, NotAskedSaysNothing) {
    auto p = plan_nccl(false, map_env({{"CUDA_VISIBLE_DEVICES", "0"}}), kWheel);
    EXPECT_FALSE(p.run);
    EXPECT_EQ(p.note, "");
}

TEST(CheckNcclPlan, NoGpuNamesTheFilesItWouldUse) {
    for (const auto& env : {map_env({}), map_env({{"CUDA_VISIBLE_DEVICES", ""}}),
                            map_env({{"CUDA_VISIBLE_DEVICES", "NoDevFiles"}})}) {
        auto p = plan_nccl(true, env, kWheel);
        EXPECT_FALSE(p.run);
        EXPECT_EQ(p.note.rfind("nccl: skipped: no GPU visible to this task (", 0), 0u) << p.note;
        EXPECT_NE(p.note.find("NCCL 2.28.9 from " + kWheel.nccl_path), std::string::npos) << p.note;
        EXPECT_NE(p.note.find(kWheel.cuda_runtime_path), std::string::npos) << p.note;
    }
}

TEST(CheckNcclPlan, AGpuRunsAndSaysWhichNccl) {
    auto p = plan_nccl(true, map_env({{"CUDA_VISIBLE_DEVICES", "0"}}), kWheel);
    EXPECT_TRUE(p.run);
    EXPECT_EQ(p.note, "nccl: using NCCL 2.28.9 from " + kWheel.nccl_path +
                          " and the CUDA runtime " + kWheel.cuda_runtime_path);
}

TEST(CheckNcclPlan, NoLibraryGivesTheLoadersReasonNotABuildOne) {
    Result<nccl::LoadedLibraries> none =
        make_error(Errc::unsupported, "NCCL is not available on this node: tried libnccl.so.2 (x)");
    auto p = plan_nccl(true, map_env({{"CUDA_VISIBLE_DEVICES", "0"}}), none);
    EXPECT_FALSE(p.run);
    EXPECT_EQ(p.note, "nccl: skipped: NCCL is not available on this node: tried libnccl.so.2 (x)");
}
