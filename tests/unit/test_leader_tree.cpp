// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/contract/contract.hpp"
#include "rendezvous/protocol/join_accounting.hpp"
#include "rendezvous/protocol/leader_tree.hpp"

using namespace sddp;

TEST(LeaderTree, EveryNodeHasOneParentAndChildrenAgree) {
    for (int k : {2, 3, 16}) {
        for (int nodes : {1, 2, 5, 17, 100}) {
            std::set<int> seen;
            for (int n = 0; n < nodes; ++n) {
                for (const int c : tree_children(n, nodes, k)) {
                    EXPECT_EQ(tree_parent(c, k), n);
                    EXPECT_TRUE(seen.insert(c).second) << "node " << c << " has two parents";
                }
                EXPECT_LE(tree_children(n, nodes, k).size(), static_cast<std::size_t>(k));
            }
            // Every node but 0 is someone's child: the tree spans the job.
            EXPECT_EQ(seen.size(), static_cast<std::size_t>(nodes - 1));
            EXPECT_EQ(tree_parent(0, k), -1);
        }
    }
}

TEST(LeaderTree, FewNodesAreAStarAndDepthIsLogarithmic) {
    EXPECT_EQ(tree_children(0, 17, 16).size(), 16u);
    EXPECT_EQ(tree_depth(17, 16), 1);
    EXPECT_EQ(tree_depth(18, 16), 2);
    EXPECT_EQ(tree_depth(1, 2), 0);
    EXPECT_EQ(tree_depth(15, 2), 3);
    EXPECT_EQ(tree_depth(16, 2), 4);
    EXPECT_EQ(tree_depth(12500, 16), 4);
    EXPECT_EQ(tree_sibling_index(17, 16), 0);
    EXPECT_EQ(tree_sibling_index(16, 16), 15);
}

TEST(LeaderTree, FanoutFromTheEnvironment) {
    EXPECT_EQ(*read_tree_fanout(map_env({})), contract::kTreeFanoutDefault);
    EXPECT_EQ(*read_tree_fanout(map_env({{contract::kTreeFanoutVar, "4"}})), 4);
    for (const char* bad : {"1", "0", "x", "4097", "-3"}) {
        auto r = read_tree_fanout(map_env({{contract::kTreeFanoutVar, bad}}));
        ASSERT_FALSE(r.ok()) << bad;
        EXPECT_NE(r.error().message.find(contract::kTreeFanoutVar), std::string::npos);
    }
}

namespace {
// A task of srun --ddp on node `nodeid` of a 4-node step n[01-04].
std::map<std::string, std::string, std::less<>> ddp_task(int nodeid) {
    return {{"SLURM_JOB_ID", "7"},
            {"SLURM_STEP_ID", "0"},
            {"SLURM_STEP_NUM_TASKS", "8"},
            {"SLURM_STEP_NUM_NODES", "4"},
            {"SLURM_STEP_NODELIST", "n[01-04]"},
            {"SLURM_STEP_TASKS_PER_NODE", "2(x4)"},
            {"SLURM_PROCID", std::to_string(2 * nodeid)},
            {"SLURM_LOCALID", "0"},
            {"SLURM_NODEID", std::to_string(nodeid)},
            {"SLURMD_NODENAME", "n0" + std::to_string(nodeid + 1)},
            {contract::kStepVar, "7.0"}};
}
Identity ddp_identity(std::uint32_t node_rank, IdentitySource source = IdentitySource::ddp) {
    Identity id;
    id.source = source;
    id.locality_known = true;
    id.node_rank = node_rank;
    id.num_nodes = 4;
    return id;
}
}  // namespace

TEST(LeaderTree, HostsInSlurmNodeOrderOnlyWhenNodeRanksAreSlurms) {
    auto hosts = leader_hosts(map_env(ddp_task(2)), ddp_identity(2), "n01");
    ASSERT_TRUE(hosts.has_value());
    EXPECT_EQ(hosts->at(3), "n04");
    EXPECT_TRUE(leader_hosts(map_env(ddp_task(2)), ddp_identity(2, IdentitySource::slurm), "n01"));
    // Rank 0 is not on node 0, or the launcher's node count is not the step's.
    EXPECT_FALSE(leader_hosts(map_env(ddp_task(2)), ddp_identity(2), "10.0.0.1"));
    Identity three = ddp_identity(2);
    three.num_nodes = 3;
    EXPECT_FALSE(leader_hosts(map_env(ddp_task(2)), three, "n01"));
    // A launcher inside the step numbers nodes its own way: torchrun's c10d in arrival order.
    EXPECT_FALSE(leader_hosts(map_env(ddp_task(2)), ddp_identity(1), "n01"));
    auto torchrun = ddp_task(2);
    torchrun["TORCHELASTIC_USE_AGENT_STORE"] = "False";
    EXPECT_FALSE(leader_hosts(map_env(torchrun), ddp_identity(2), "n01"));
    EXPECT_FALSE(leader_hosts(map_env(ddp_task(2)), ddp_identity(2, IdentitySource::mpi), "n01"));
    auto no_plugin = ddp_task(2);
    no_plugin.erase(contract::kStepVar);
    EXPECT_FALSE(leader_hosts(map_env(no_plugin), ddp_identity(2), "n01"));
    EXPECT_FALSE(leader_hosts(map_env({}), ddp_identity(2), "n01"));
}

TEST(LeaderTree, HeterogeneousStepsFollowSlurmsNodeIds) {
    // Components on n03-n04 then n01-n02: Slurm numbers n03 as node 0 and it runs rank 0.
    auto env = ddp_task(2);
    env["SLURM_HET_SIZE"] = "2";
    env["SLURM_NODELIST_HET_GROUP_0"] = "n[03-04]";
    env["SLURM_NODELIST_HET_GROUP_1"] = "n[01-02]";
    env["SLURMD_NODENAME"] = "n01";
    auto hosts = leader_hosts(map_env(env), ddp_identity(2), "n03");
    ASSERT_TRUE(hosts.has_value());
    EXPECT_EQ(*hosts, (std::vector<std::string>{"n03", "n04", "n01", "n02"}));
}

TEST(JoinAccountingTree, ParentAcceptsOnlyItsChildNodesAndWaitsForTheirSubtrees) {
    // Node 1 of a fanout-2 tree: children 3 and 4; 2 ranks per node; world 16.
    JoinAccounting j(false, 16, 2, 2, 1, {3, 4});
    EXPECT_TRUE(j.tree());
    EXPECT_FALSE(j.complete());
    EXPECT_NE(j.check_direct(10, 0, 2, 5)->find("not a child of node 1"), std::string::npos);
    EXPECT_EQ(j.check_direct(6, 0, 2, 3), std::nullopt);
    j.add_direct(100, 6, 2, 3);
    EXPECT_NE(j.check_direct(7, 0, 2, 3)->find("duplicate node leader for node 3"),
              std::string::npos);
    EXPECT_EQ(j.check_direct(8, 0, 2, 4), std::nullopt);
    j.add_direct(101, 8, 2, 4);
    j.add_local(5, 3, 1);
    EXPECT_FALSE(j.complete());  // joined, but their subtrees have not said they are complete
    EXPECT_EQ(j.incomplete_child_nodes(), (std::vector<int>{3, 4}));
    // Reports from a subtree may name any rank (deeper nodes), each once.
    EXPECT_EQ(j.report_local(100, 7), std::nullopt);
    EXPECT_NE(j.report_local(101, 7), std::nullopt);
    EXPECT_EQ(j.subtree_complete(100), std::nullopt);
    EXPECT_NE(j.subtree_complete(100), std::nullopt);  // twice
    EXPECT_NE(j.subtree_complete(5), std::nullopt);    // a local is no child leader
    EXPECT_FALSE(j.complete());
    EXPECT_EQ(j.subtree_complete(101), std::nullopt);
    EXPECT_TRUE(j.complete());
    EXPECT_EQ(j.ranks_via(100), (std::vector<int>{6, 7}));
}

TEST(JoinAccountingTree, RootCountsTheWorldThroughItsChildren) {
    JoinAccounting j(true, 6, 1, 0, 0, {1, 2});
    j.add_direct(100, 1, 1, 1);
    j.add_direct(101, 2, 1, 2);
    EXPECT_EQ(j.report_local(100, 3), std::nullopt);
    EXPECT_EQ(j.report_local(100, 4), std::nullopt);
    EXPECT_EQ(j.subtree_complete(100), std::nullopt);
    EXPECT_EQ(j.subtree_complete(101), std::nullopt);
    EXPECT_FALSE(j.complete());
    EXPECT_EQ(j.missing_ranks(), (std::vector<int>{5}));
    EXPECT_EQ(j.report_local(101, 5), std::nullopt);
    EXPECT_TRUE(j.complete());
}
