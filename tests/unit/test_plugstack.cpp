// SPDX-License-Identifier: Apache-2.0
// scan_plugstack: the plugin's arguments as slurmstepd would pass them.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/slurm/plugstack.hpp"
#include "os/plugstack_file.hpp"

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

TEST(Plugstack, IncludeOrderIsKept) {
    auto scan = scan_plugstack("include a/*.conf\noptional spank_ddp.so x\ninclude b/*.conf\n");
    ASSERT_TRUE(scan.plugin_args.has_value());
    EXPECT_EQ(scan.includes_before_plugin, 1u);
}

// Slurm's _spank_conf_include: a relative pattern is taken from the including file's directory.
TEST(Plugstack, RelativeIncludeIsFromTheIncludingFile) {
    EXPECT_EQ(include_pattern("/etc/slurm/plugstack.conf", "plugstack.conf.d/*.conf"),
              "/etc/slurm/plugstack.conf.d/*.conf");
    EXPECT_EQ(include_pattern("/etc/slurm/plugstack.conf", "/opt/x/*.conf"), "/opt/x/*.conf");
    EXPECT_EQ(include_pattern("plugstack.conf", "d/*.conf"), "./d/*.conf");
    EXPECT_EQ(include_pattern("/plugstack.conf", "d/*.conf"), "/d/*.conf");
}

TEST(Plugstack, SlurmConfSetting) {
    EXPECT_EQ(plugstack_setting("ClusterName=x\nPlugStackConfig=/opt/slurm/etc/ps.conf\n"),
              "/opt/slurm/etc/ps.conf");
    EXPECT_EQ(plugstack_setting("  plugstackconfig = /a  # c\n"), "/a");
    EXPECT_EQ(plugstack_setting("PLUGSTACKCONFIG=\"/q.conf\"\n"), "/q.conf");
    EXPECT_EQ(plugstack_setting("PlugStackConfig=/a\nPlugStackConfig=/b\n"), "/b");
    EXPECT_FALSE(plugstack_setting("#PlugStackConfig=/a\nPlugStackConfigX=/b\n"));
    EXPECT_EQ(default_plugstack_path("/run/slurm/conf/slurm.conf"),
              "/run/slurm/conf/plugstack.conf");
}

namespace {

class PlugstackFiles : public ::testing::Test {
  protected:
    void SetUp() override {
        char tmpl[] = "/tmp/sddp-plugstack.XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
    }
    void TearDown() override {
        std::error_code ec;
        std::filesystem::remove_all(dir_, ec);
    }
    void write(const std::string& rel, const std::string& text) const {
        std::filesystem::create_directories(std::filesystem::path(dir_ + "/" + rel).parent_path());
        std::ofstream(dir_ + "/" + rel) << text;
    }
    std::string dir_;
};

}  // namespace

TEST_F(PlugstackFiles, PlugStackConfigAndRelativeIncludes) {
    write("etc/slurm.conf", "ClusterName=c\nPlugStackConfig=" + dir_ + "/spank/stack.conf\n");
    // The include comes first, so its line is the one Slurm loads; the second is refused by Slurm.
    write("spank/stack.conf", "include stack.d/*.conf\noptional /lib/spank_ddp.so port=1\n");
    write("spank/stack.d/ddp.conf", "required /usr/lib/slurm/spank_ddp.so default=on\n");
    std::string from;
    const EnvLookup env = map_env({{"SLURM_CONF", dir_ + "/etc/slurm.conf"}});
    const std::string path = site_plugstack_path(env, &from);
    EXPECT_EQ(path, dir_ + "/spank/stack.conf");
    EXPECT_NE(from.find("PlugStackConfig"), std::string::npos) << from;
    std::string why;
    auto args = plugstack_plugin_arguments(path, &why);
    ASSERT_TRUE(args.has_value()) << why;
    EXPECT_EQ(*args, std::vector<std::string>{"default=on"});
}

TEST_F(PlugstackFiles, DefaultIsBesideSlurmConf) {
    write("etc/slurm.conf", "ClusterName=c\n");
    write("etc/plugstack.conf", "optional spank_ddp.so port-range=30000-30999\ninclude x/*.conf\n");
    write("etc/x/ddp.conf", "optional spank_ddp.so default=on\n");
    std::string from;
    const std::string path =
        site_plugstack_path(map_env({{"SLURM_CONF", dir_ + "/etc/slurm.conf"}}), &from);
    EXPECT_EQ(path, dir_ + "/etc/plugstack.conf");
    std::string why;
    auto args = plugstack_plugin_arguments(path, &why);
    ASSERT_TRUE(args.has_value()) << why;
    EXPECT_EQ(*args, std::vector<std::string>{"port-range=30000-30999"});
}

TEST_F(PlugstackFiles, MissingLineIsSaid) {
    write("etc/plugstack.conf", "include nothing/*.conf\noptional other.so\n");
    std::string why;
    EXPECT_FALSE(plugstack_plugin_arguments(dir_ + "/etc/plugstack.conf", &why));
    EXPECT_NE(why.find("no line naming spank_ddp.so"), std::string::npos) << why;
    EXPECT_FALSE(plugstack_plugin_arguments(dir_ + "/none.conf", &why));
    EXPECT_NE(why.find("cannot read"), std::string::npos) << why;
}

TEST_F(PlugstackFiles, IncludeLoopEnds) {
    write("etc/plugstack.conf", "include plugstack.conf\n");
    std::string why;
    EXPECT_FALSE(plugstack_plugin_arguments(dir_ + "/etc/plugstack.conf", &why));
}
