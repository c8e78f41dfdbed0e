// SPDX-License-Identifier: Apache-2.0
// The step's hosts by SLURM_NODEID: the sorted node list for ordinary steps, component order for
// heterogeneous ones, and an error rather than a wrong rank 0 when the order cannot be rebuilt.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/slurm/node_order.hpp"

using namespace sddp;

namespace {

StepFacts het_step(std::vector<std::string> components, std::uint32_t nodeid,
                   std::string node_name) {
    StepFacts f;
    f.nodes = {"n1", "n2", "n3"};  // Slurm sorts the step's node list
    f.tasks_per_node = {1, 1, 1};
    f.nnodes = 3;
    f.ntasks = 3;
    f.nodeid = nodeid;
    f.node_name = std::move(node_name);
    f.het_component_nodelists = std::move(components);
    return f;
}

}  // namespace

TEST(NodeOrder, OrdinaryStepKeepsTheSortedList) {
    StepFacts f;
    f.nodes = {"a1", "a2"};
    f.node_name = "a2";
    f.nodeid = 1;
    auto order = nodes_by_nodeid(f);
    ASSERT_TRUE(order.ok()) << order.error().message;
    EXPECT_EQ(*order, (std::vector<std::string>{"a1", "a2"}));
}

TEST(NodeOrder, HeterogeneousStepNumbersNodesInComponentOrder) {
    // Components on n3 then n[1-2]: n3 is node 0 and runs rank 0.
    auto order = nodes_by_nodeid(het_step({"n3", "n[1-2]"}, 0, "n3"));
    ASSERT_TRUE(order.ok()) << order.error().message;
    EXPECT_EQ(*order, (std::vector<std::string>{"n3", "n1", "n2"}));
}

TEST(NodeOrder, ComponentsThatMissANodeAreAnErrorNamingTheFix) {
    auto order = nodes_by_nodeid(het_step({"n3", "n1"}, 0, "n3"));
    ASSERT_FALSE(order.ok());
    EXPECT_NE(order.error().message.find("SLURM_NODELIST_HET_GROUP_"), std::string::npos);
    EXPECT_NE(order.error().message.find("2 of the step's 3 node(s)"), std::string::npos);
    EXPECT_NE(order.error().message.find("--ddp=addr="), std::string::npos);
}

TEST(NodeOrder, ThisTaskMustSitAtItsOwnNodeId) {
    // SLURM_NODEID=1 on n3, but the components put n1 at index 1.
    auto order = nodes_by_nodeid(het_step({"n3", "n[1-2]"}, 1, "n3"));
    ASSERT_FALSE(order.ok());
    EXPECT_NE(order.error().message.find("SLURM_NODEID=1"), std::string::npos);
    EXPECT_NE(order.error().message.find("'n1'"), std::string::npos);
}

TEST(NodeOrder, BadComponentListNamesTheVariable) {
    auto order = nodes_by_nodeid(het_step({"n3", "n[1-"}, 0, "n3"));
    ASSERT_FALSE(order.ok());
    EXPECT_NE(order.error().message.find("SLURM_NODELIST_HET_GROUP_1"), std::string::npos);
}
