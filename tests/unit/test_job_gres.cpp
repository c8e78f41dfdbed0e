// SPDX-License-Identifier: Apache-2.0
// The job's GPUs on a node from `scontrol show job -d` (core/slurm/job_gres.hpp).
#include <gtest/gtest.h>

#include "core/slurm/job_gres.hpp"

using namespace sddp;

namespace {

// As Slurm 22.05 prints a job of two nodes with --gpus-per-task=1, -n3.
const char* kShowJob =
    "JobId=17 JobName=bash\n"
    "   UserId=root(0) GroupId=root(0) MCS_label=N/A\n"
    "   NodeList=n[1-2]\n"
    "   JOB_GRES=gpu:3\n"
    "     Nodes=n1 CPU_IDs=0-1 Mem=0 GRES=gpu:2(IDX:0-1)\n"
    "     Nodes=n2 CPU_IDs=0 Mem=0 GRES=gpu:1(IDX:2)\n"
    "   TresPerTask=gres:gpu:1\n";

}  // namespace

TEST(JobGres, IndicesOfTheNode) {
    EXPECT_EQ(job_gpu_indices(kShowJob, "n1"), "0,1");
    EXPECT_EQ(job_gpu_indices(kShowJob, "n2"), "2");
    EXPECT_EQ(job_gpu_indices(kShowJob, "n3"), std::nullopt);
}

TEST(JobGres, HostlistsTypesAndSeveralKinds) {
    const char* text =
        "     Nodes=gpu[01-02] CPU_IDs=0-7 Mem=0 GRES=nic:1(IDX:0),gpu:a100:3(IDX:0,2-3)\n";
    EXPECT_EQ(job_gpu_indices(text, "gpu02"), "0,2,3");
    EXPECT_EQ(job_gpu_indices("     Nodes=n1 CPU_IDs=0 Mem=0 GRES=\n", "n1"), std::nullopt);
    EXPECT_EQ(job_gpu_indices("     Nodes=n1 CPU_IDs=0 Mem=0 GRES=gpu:2(IDX:x)\n", "n1"),
              std::nullopt);
    EXPECT_EQ(job_gpu_indices("", "n1"), std::nullopt);
}
