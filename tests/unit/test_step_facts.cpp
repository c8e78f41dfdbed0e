// SPDX-License-Identifier: Apache-2.0
// core/slurm/step_facts: reading a step's layout from Slurm's variables, and refusing a wrong one
// with the variable, its value and the fix.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/slurm/step_facts.hpp"
#include "step_vars.hpp"

using namespace sddp;

struct BadEnv {
    const char* variable;
    const char* value;  // nullptr: remove the variable
    const char* must_mention;
};

class StepFactErrors : public ::testing::TestWithParam<BadEnv> {};

TEST_P(StepFactErrors, NameVariableAndValue) {
    auto v = sddp::unit::task(5, 1, 1, 8, "n[1-2]", 2, "4(x2)", "n2");
    const auto& p = GetParam();
    if (p.value == nullptr) {
        v.erase(p.variable);
        if (std::string(p.variable) == "SLURM_STEP_NUM_TASKS") v.erase("SLURM_NTASKS");
    } else {
        v[p.variable] = p.value;
    }
    auto f = read_step_facts(map_env(v));
    ASSERT_FALSE(f.ok()) << p.variable << "=" << (p.value ? p.value : "(unset)");
    EXPECT_NE(f.error().message.find(p.must_mention), std::string::npos) << f.error().message;
}

INSTANTIATE_TEST_SUITE_P(
    All, StepFactErrors,
    ::testing::Values(BadEnv{"SLURM_PROCID", nullptr, "SLURM_PROCID is not set"},
                      BadEnv{"SLURM_PROCID", "", "SLURM_PROCID is empty"},
                      BadEnv{"SLURM_PROCID", "five", "'five'"},
                      BadEnv{"SLURM_PROCID", "-1", "'-1'"},
                      BadEnv{"SLURM_PROCID", "8", "SLURM_PROCID=8"},
                      BadEnv{"SLURM_PROCID", "99999999999999999999", "SLURM_PROCID"},
                      BadEnv{"SLURM_LOCALID", "4", "SLURM_LOCALID=4"},
                      BadEnv{"SLURM_LOCALID", " 1", "SLURM_LOCALID"},
                      BadEnv{"SLURM_NODEID", "2", "SLURM_NODEID=2"},
                      BadEnv{"SLURM_STEP_NUM_TASKS", nullptr, "SLURM_NTASKS"},
                      BadEnv{"SLURM_STEP_NUM_TASKS", "0", "at least one task"},
                      BadEnv{"SLURM_STEP_NUM_TASKS", "9", "adds up to 8"},
                      BadEnv{"SLURM_STEP_NODELIST", "n1", "names 1 node(s)"},
                      BadEnv{"SLURM_STEP_NODELIST", "n[1-", "SLURM_STEP_NODELIST"},
                      BadEnv{"SLURM_STEP_NODELIST", "n[0-999999999]", "SLURM_STEP_NODELIST"},
                      BadEnv{"SLURM_STEP_TASKS_PER_NODE", "4", "counts for 1 node"},
                      BadEnv{"SLURM_STEP_TASKS_PER_NODE", "4(x3)", "SLURM_STEP_TASKS_PER_NODE"},
                      BadEnv{"SLURM_STEP_TASKS_PER_NODE", "x", "SLURM_STEP_TASKS_PER_NODE"},
                      BadEnv{"SLURM_JOB_ID", nullptr, "SLURM_JOB_ID"},
                      BadEnv{"SLURM_STEP_NUM_NODES", "abc", "'abc'"},
                      // The README caps host lists at 2^20 hosts before expansion.
                      BadEnv{"SLURM_STEP_NUM_NODES", "1048577", "0 to 1048576"}));

TEST(StepFacts, SpecialStepsAreRecognised) {
    EXPECT_TRUE(is_special_step(0xfffffffbu));  // batch script
    EXPECT_TRUE(is_special_step(0xfffffffcu));  // extern
    EXPECT_TRUE(is_special_step(0xfffffffau));  // interactive
    EXPECT_FALSE(is_special_step(0));
    EXPECT_EQ(read_step_id(map_env({{"SLURM_STEP_ID", "4294967291"}})), 0xfffffffbu);
    EXPECT_FALSE(read_step_id(map_env({})).has_value());
}

TEST(RanksPerNode, BlockCyclicPlane) {
    auto facts = [](const char* dist) {
        auto v = sddp::unit::task(0, 0, 0, 5, "n[1-2]", 2, "3,2", "n1");
        v["SLURM_DISTRIBUTION"] = dist;
        return *read_step_facts(map_env(v));
    };
    using L = std::vector<std::vector<std::uint32_t>>;
    EXPECT_EQ(*ranks_per_node(facts("block")), (L{{0, 1, 2}, {3, 4}}));
    EXPECT_EQ(*ranks_per_node(facts("cyclic")), (L{{0, 2, 4}, {1, 3}}));
    EXPECT_EQ(*ranks_per_node(facts("cyclic:block")), (L{{0, 2, 4}, {1, 3}}));
    EXPECT_EQ(*ranks_per_node(facts("plane=2")), (L{{0, 1, 4}, {2, 3}}));
    EXPECT_FALSE(ranks_per_node(facts("arbitrary")).ok());
}
