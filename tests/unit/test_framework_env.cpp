// SPDX-License-Identifier: Apache-2.0
// The torchelastic markers and the worker defaults a task gets unless the user set them.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "core/task/framework_env.hpp"
#include "step_vars.hpp"

using namespace sddp;
using namespace sddp::unit;

// ---- torchelastic and worker defaults ----------------------------------------------------------

TEST(FrameworkEnv, TorchelasticMarkers) {
    auto f = facts_of(task(0, 0, 0, 1, "n1", 1, "1", "n1"));
    auto t = torchelastic_env(f, std::string("2"));
    ASSERT_TRUE(t.ok());
    auto m = as_map(*t);
    EXPECT_EQ(m["TORCHELASTIC_RUN_ID"], "1234.3");
    EXPECT_EQ(m["TORCHELASTIC_RESTART_COUNT"], "2");
    EXPECT_EQ(m["TORCHELASTIC_MAX_RESTARTS"], "0");
    EXPECT_EQ(m.count("TORCHELASTIC_USE_AGENT_STORE"), 0u);
    EXPECT_EQ(as_map(*torchelastic_env(f, std::nullopt))["TORCHELASTIC_RESTART_COUNT"], "0");
    auto bad = torchelastic_env(f, std::string("x"));
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().message.find("SLURM_RESTART_COUNT='x'"), std::string::npos);
}

TEST(FrameworkEnv, WorkerDefaultsUnlessTheUserSetEither) {
    auto m = as_map(worker_default_env(map_env({})));
    EXPECT_EQ(m["TORCH_NCCL_ASYNC_ERROR_HANDLING"], "1");
    EXPECT_EQ(m.count("NCCL_ASYNC_ERROR_HANDLING"), 0u);  // PyTorch 2.2+ warns on every rank
    EXPECT_TRUE(worker_default_env(map_env({{"NCCL_ASYNC_ERROR_HANDLING", "0"}})).empty());
    EXPECT_TRUE(worker_default_env(map_env({{"TORCH_NCCL_ASYNC_ERROR_HANDLING", "3"}})).empty());
}
