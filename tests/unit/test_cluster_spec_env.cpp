// SPDX-License-Identifier: Apache-2.0
// --ddp=jax and --ddp=tf: the coordinator and process variables JAX reads, and the port block
// TF_CONFIG needs.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "core/task/cluster_spec_env.hpp"

using namespace sddp;

namespace {

std::map<std::string, EnvAssignment> by_name(const std::vector<EnvAssignment>& vars) {
    std::map<std::string, EnvAssignment> m;
    for (const auto& v : vars) m[v.name] = v;
    return m;
}

LaunchEnv rank5_of_8() {
    LaunchEnv l;
    l.rank = 5;
    l.world_size = 8;
    l.master_addr = "n1";
    l.master_port = 29500;
    return l;
}

}  // namespace

TEST(JaxEnv, CoordinatorIsTheStepsMasterAndProcessesAreRanks) {
    const auto v = by_name(jax_env(rank5_of_8(), 1, false));
    EXPECT_EQ(v.at("JAX_COORDINATOR_ADDRESS").value, "n1:29500");
    EXPECT_EQ(v.at("JAX_NUM_PROCESSES").value, "8");
    EXPECT_EQ(v.at("JAX_PROCESS_ID").value, "5");
    EXPECT_EQ(v.at("JAX_LOCAL_DEVICE_IDS").value, "1");
    // The user's own coordinator wins unless the site overrides the environment.
    EXPECT_TRUE(v.at("JAX_COORDINATOR_ADDRESS").keep_existing);
    EXPECT_FALSE(
        by_name(jax_env(rank5_of_8(), 1, true)).at("JAX_COORDINATOR_ADDRESS").keep_existing);
}

TEST(JaxEnv, NoDeviceIdsWithoutABoundGpu) {
    const auto v = by_name(jax_env(rank5_of_8(), -1, false));
    EXPECT_EQ(v.count("JAX_LOCAL_DEVICE_IDS"), 0u);
    EXPECT_EQ(v.size(), 3u);
}

TEST(TfPorts, MasterPortPlusOnePerTaskOnTheBusiestNode) {
    StepFacts f;
    f.tasks_per_node = {2, 4, 3};
    EXPECT_EQ(tf_ports_needed(f), 5u);
    f.tasks_per_node = {1};
    EXPECT_EQ(tf_ports_needed(f), 2u);
    f.tasks_per_node = {};
    EXPECT_EQ(tf_ports_needed(f), 2u);
}
