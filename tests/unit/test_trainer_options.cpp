// SPDX-License-Identifier: Apache-2.0
// The options the trainer-facing pieces add (launcher, torchelastic, workers, rank order, port
// blocks, net hints, debug): parsed from --ddp text and plugstack.conf arguments.
#include <gtest/gtest.h>

#include <string>

#include "core/options/options.hpp"
#include "core/task/debug_env.hpp"
#include "core/task/framework_env.hpp"
#include "core/task/rank_order.hpp"
#include "step_vars.hpp"

using namespace sddp;
using namespace sddp::unit;

// ---- options -------------------------------------------------------------------------------

TEST(TrainerOptions, ParsesNewKeys) {
    auto o = given_of("launcher,nproc=8,torchelastic,ports=16,net-hints,debug=/scratch/d");
    EXPECT_TRUE(*o.launcher);
    EXPECT_EQ(*o.nproc, 8u);
    EXPECT_TRUE(*o.torchelastic);
    EXPECT_EQ(*o.ports, 16u);
    EXPECT_TRUE(*o.nccl_hints);
    EXPECT_TRUE(*o.debug);
    EXPECT_EQ(*o.debug_dir, "/scratch/d");
    EXPECT_EQ(describe_options(o),
              "ports=16,net-hints,launcher,nproc=8,torchelastic,debug=/scratch/d");
    EXPECT_EQ(*given_of("rank-order=node").rank_order, RankOrder::node);
    EXPECT_TRUE(*given_of("nccl-hints").nccl_hints);  // the older name still works
    EXPECT_FALSE(given_of("debug").debug_dir.has_value());
    EXPECT_FALSE(*given_of("debug=no").debug);
    // In force: debug without a directory writes to the declared default one.
    EXPECT_EQ(opts_of("debug").debug_dir, kDefaultDebugDir);
    EXPECT_EQ(opts_of("rank-order=node").rank_order, RankOrder::node);
}

// The debug row's help names the default directory in words: the same one resolution uses.
TEST(TrainerOptions, DebugHelpNamesTheDefaultDirectory) {
    const OptionSpec* debug = find_option("debug");
    ASSERT_NE(debug, nullptr);
    EXPECT_NE(debug->help.find(kDefaultDebugDir), std::string_view::npos) << debug->help;
}

TEST(TrainerOptions, SiteDefaultsAndUserOverride) {
    auto site = parse_site_arguments({"ports=8", "torchelastic", "rank-order=node", "debug=dbg"});
    ASSERT_TRUE(site.ok()) << site.error().message;
    auto merged = merge_options(*site, given_of("ports=2,torchelastic=no"));
    EXPECT_EQ(*merged.ports, 2u);
    EXPECT_FALSE(merged.torchelastic);
    EXPECT_EQ(merged.rank_order, RankOrder::node);
    EXPECT_EQ(merged.debug_dir, "dbg");
}
