// SPDX-License-Identifier: Apache-2.0
// core/task/layout_table: the one table `--ddp=verbose` and `slurm-ddp env --table` print.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "core/task/launch_env.hpp"
#include "core/task/layout_table.hpp"
#include "step_vars.hpp"

using namespace sddp;
using namespace sddp::unit;

namespace {

std::string table_for(const Vars& v, const char* options, std::size_t max_rows = 64) {
    const StepFacts f = facts_of(v);
    const StepOptions o = opts_of(options);
    auto launch = derive_launch_env(f, o, {});
    EXPECT_TRUE(launch.ok()) << launch.error().message;
    const LocalGpuDescriber gpus = [](std::uint32_t local, std::uint32_t tasks) {
        return "gpu" + std::to_string(local) + "/" + std::to_string(tasks);
    };
    return format_layout_table(f, *launch, o, gpus, max_rows);
}

}  // namespace

TEST(LayoutTable, OneRowPerRankInRankOrderWithEveryColumn) {
    // srun -N2 -n3 -m cyclic: ranks 0 and 2 on n1, rank 1 on n2.
    const std::string t =
        table_for(task(0, 0, 0, 3, "n[1-2]", 2, "2,1", "n1", "cyclic"), "verbose");
    EXPECT_NE(t.find("WORLD_SIZE=3 on 2 node(s), MASTER_ADDR=n1"), std::string::npos) << t;
    EXPECT_NE(t.find("options verbose"), std::string::npos) << t;
    const auto r0 = t.find("\n  0 ");
    const auto r1 = t.find("\n  1 ");
    const auto r2 = t.find("\n  2 ");
    ASSERT_NE(r0, std::string::npos) << t;
    ASSERT_NE(r1, std::string::npos) << t;
    ASSERT_NE(r2, std::string::npos) << t;
    EXPECT_LT(r0, r1);
    EXPECT_LT(r1, r2);
    // Rank 1 is node 1's only task; rank 2 is node 0's second: the describer sees exactly that.
    EXPECT_NE(t.find("n2    1          0           gpu0/1"), std::string::npos) << t;
    EXPECT_NE(t.find("n1    0          1           gpu1/2"), std::string::npos) << t;
    // One sentence says whose allocation the GPU column uses, for every row alike.
    EXPECT_NE(t.find("GPUS as bound with n1's allocation"), std::string::npos) << t;
}

TEST(LayoutTable, LargeStepsAreCappedWithACount) {
    const std::string t = table_for(task(0, 0, 0, 200, "n[1-50]", 50, "4(x50)", "n1"), "", 10);
    EXPECT_NE(t.find("... 190 more rank(s)"), std::string::npos) << t;
    EXPECT_EQ(t.find("\n  10 "), std::string::npos) << t;
    EXPECT_NE(t.find("\n  9 "), std::string::npos) << t;
}

TEST(LayoutTable, NodeRankOrderNumbersEachNodeContiguously) {
    // -m cyclic with rank-order=node: RANK runs 0,1 on n1 and 2 on n2, whatever Slurm's order.
    const std::string t =
        table_for(task(0, 0, 0, 3, "n[1-2]", 2, "2,1", "n1", "cyclic"), "rank-order=node");
    EXPECT_NE(t.find("\n  1     n1"), std::string::npos) << t;
    EXPECT_NE(t.find("\n  2     n2"), std::string::npos) << t;
}
