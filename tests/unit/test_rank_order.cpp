// SPDX-License-Identifier: Apache-2.0
// Which global rank a task gets under --ddp=rank_order, from Slurm-shaped facts.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <set>
#include <vector>

#include "core/task/launch_env.hpp"
#include "core/task/rank_order.hpp"
#include "step_vars.hpp"

using namespace sddp;
using namespace sddp::unit;

// ---- rank-order ------------------------------------------------------------------------------

TEST(RankOrder, NodeOrderIsContiguousPerNodeUnderCyclic) {
    // srun -N2 -n5 -m cyclic: node 0 runs procids 0,2,4 and node 1 runs 1,3.
    const std::vector<std::array<std::uint32_t, 3>> tasks{// procid, localid, nodeid
                                                          {0, 0, 0},
                                                          {1, 0, 1},
                                                          {2, 1, 0},
                                                          {3, 1, 1},
                                                          {4, 2, 0}};
    std::set<std::uint32_t> seen;
    for (const auto& [procid, localid, nodeid] : tasks) {
        auto f = facts_of(task(procid, localid, nodeid, 5, "n[1-2]", 2, "3,2",
                               nodeid == 0 ? "n1" : "n2", "cyclic"));
        const auto r = ordered_rank(f, RankOrder::node);
        EXPECT_EQ(r, nodeid * 3 + localid) << procid;
        EXPECT_EQ(ordered_rank(f, RankOrder::block), procid);
        seen.insert(r);
        StepOptions o = opts_of("rank-order=node");
        auto e = derive_launch_env(f, o, {});
        ASSERT_TRUE(e.ok()) << e.error().message;
        EXPECT_EQ(as_map(e->vars)["RANK"], std::to_string(nodeid * 3 + localid));
        EXPECT_EQ(as_map(e->vars)["ROLE_RANK"], std::to_string(nodeid * 3 + localid));
    }
    EXPECT_EQ(seen.size(), 5u);
    auto f = facts_of(task(0, 0, 0, 5, "n[1-2]", 2, "3,2", "n1", "plane=2"));
    using L = std::vector<std::vector<std::uint32_t>>;
    EXPECT_EQ(*ordered_ranks_per_node(f, RankOrder::node), (L{{0, 1, 2}, {3, 4}}));
    EXPECT_EQ(*ordered_ranks_per_node(f, RankOrder::block), (L{{0, 1, 4}, {2, 3}}));
}
