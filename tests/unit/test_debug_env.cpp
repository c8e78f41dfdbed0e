// SPDX-License-Identifier: Apache-2.0
// --ddp=debug: one directory per step and the variables that point the frameworks at it.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>

#include "core/contract/contract.hpp"
#include "core/task/debug_env.hpp"
#include "step_vars.hpp"

using namespace sddp;
using namespace sddp::unit;

// ---- debug -----------------------------------------------------------------------------------

TEST(DebugEnv, OneDirectoryPerStep) {
    auto f = facts_of(task(5, 1, 1, 8, "n[1-2]", 2, "4(x2)", "n2"));
    auto d = derive_debug_env(opts_of("debug"), f, std::string("/home/u/run/"), 5u);
    ASSERT_TRUE(d.ok()) << d.error().message;
    EXPECT_EQ(d->dir, "/home/u/run/slurm-ddp-debug/1234.3");
    auto m = as_map(d->vars);
    EXPECT_EQ(m["NCCL_DEBUG"], "INFO");
    EXPECT_EQ(m["NCCL_DEBUG_FILE"], "/home/u/run/slurm-ddp-debug/1234.3/nccl.rank5.log");
    EXPECT_EQ(m["TORCH_DISTRIBUTED_DEBUG"], "DETAIL");
    EXPECT_EQ(m["TORCH_NCCL_DUMP_ON_TIMEOUT"], "1");
    EXPECT_EQ(m["TORCH_NCCL_DEBUG_INFO_TEMP_FILE"],
              "/home/u/run/slurm-ddp-debug/1234.3/nccl_trace_rank_");
    EXPECT_EQ(m[contract::kDebugDirVar], "/home/u/run/slurm-ddp-debug/1234.3");
    for (const auto& v : d->vars) EXPECT_TRUE(v.keep_existing) << v.name;
    // The variables set are exactly the ones the option table declares for `debug`.
    ASSERT_EQ(d->vars.size(), debug_variable_names().size());
    for (const auto& v : d->vars) {
        EXPECT_NE(std::find(debug_variable_names().begin(), debug_variable_names().end(), v.name),
                  debug_variable_names().end())
            << v.name;
    }

    auto abs = derive_debug_env(opts_of("debug=/scratch/x/"), f, std::nullopt, std::nullopt);
    ASSERT_TRUE(abs.ok());
    EXPECT_EQ(abs->dir, "/scratch/x/1234.3");
    EXPECT_EQ(as_map(abs->vars)["NCCL_DEBUG_FILE"], "/scratch/x/1234.3/nccl.node1.%p.log");
    auto rel = derive_debug_env(opts_of("debug=dbg"), f, std::nullopt, 5u);
    ASSERT_FALSE(rel.ok());
    EXPECT_NE(rel.error().message.find("SLURM_SUBMIT_DIR"), std::string::npos);
}
