// SPDX-License-Identifier: Apache-2.0
// scan_plugstack: the plugin's arguments as slurmstepd would pass them.
#include <gtest/gtest.h>

#include "core/plugstack.hpp"

using namespace sddp;

TEST(Plugstack, FindsThePluginLineAndItsArguments) {
    auto scan = scan_plugstack(
        "# site plugins\n"
        "required /usr/lib/slurm/other.so x=1\n"
        "optional  /usr/lib/x86_64-linux-gnu/slurm-wlm/spank_ddp.so\tdefault=on "
        "port-range=30000-30999"
        "  # comment\n"
        "include /etc/slurm/plugstack.conf.d/*.conf\n");
    ASSERT_TRUE(scan.plugin_args.has_value());
    EXPECT_EQ(*scan.plugin_args,
              (std::vector<std::string>{"default=on", "port-range=30000-30999"}));
    EXPECT_EQ(scan.includes, (std::vector<std::string>{"/etc/slurm/plugstack.conf.d/*.conf"}));
}

TEST(Plugstack, RelativePathAndNoArguments) {
    auto scan = scan_plugstack("required spank_ddp.so\r\n");
    ASSERT_TRUE(scan.plugin_args.has_value());
    EXPECT_TRUE(scan.plugin_args->empty());
}

TEST(Plugstack, CommentedOutOrOtherPluginsDoNotCount) {
    EXPECT_FALSE(scan_plugstack("#optional /x/spank_ddp.so default=on\n").plugin_args);
    EXPECT_FALSE(scan_plugstack("optional /x/spank_ddp.so.bak default=on\n").plugin_args);
    EXPECT_FALSE(scan_plugstack("optional /x/my_spank_ddp.so default=on\n").plugin_args);
    EXPECT_FALSE(scan_plugstack("spank_ddp.so default=on\n").plugin_args);
    EXPECT_FALSE(scan_plugstack("").plugin_args);
}

TEST(Plugstack, FirstLineWins) {
    auto scan = scan_plugstack("optional /a/spank_ddp.so verbose\noptional /b/spank_ddp.so\n");
    ASSERT_TRUE(scan.plugin_args.has_value());
    EXPECT_EQ(*scan.plugin_args, (std::vector<std::string>{"verbose"}));
}
