// SPDX-License-Identifier: Apache-2.0
// `slurm-ddp stacks` as root: a tool is used only where root alone can have put it.
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "stacks/stacks_trust.hpp"

namespace sddp::stacks {
namespace {

constexpr mode_t kDir = S_IFDIR;
constexpr mode_t kFile = S_IFREG;

TEST(StacksTrust, EveryEntryOwnedByRootAndWritableByRootAlone) {
    const std::vector<PathEntry> good{{"/", 0, kDir | 0755},
                                      {"/usr", 0, kDir | 0755},
                                      {"/usr/bin", 0, kDir | 0755},
                                      {"/usr/bin/gdb", 0, kFile | 0755}};
    EXPECT_EQ(untrusted_reason(good), "");

    auto group_writable = good;
    group_writable[2].mode = kDir | 0775;
    EXPECT_EQ(untrusted_reason(group_writable),
              "/usr/bin is writable by group or others (mode 0775)");

    auto sticky = good;
    sticky[1] = {"/tmp", 0, kDir | 01777};
    EXPECT_EQ(untrusted_reason(sticky), "/tmp is writable by group or others (mode 1777)");

    auto users_file = good;
    users_file[3].uid = 1000;
    EXPECT_EQ(untrusted_reason(users_file), "/usr/bin/gdb is owned by uid 1000, not root");

    auto writable_file = good;
    writable_file[3].mode = kFile | 0757;
    EXPECT_NE(untrusted_reason(writable_file).find("/usr/bin/gdb is writable"), std::string::npos);

    // The first offender from the top is named.
    auto both = group_writable;
    both[3].uid = 1000;
    EXPECT_EQ(untrusted_reason(both), "/usr/bin is writable by group or others (mode 0775)");
}

TEST(StacksTrust, ASystemToolPasses) {
    // /bin/sh: root's on every system these tests run on (through /bin -> usr/bin where merged).
    const auto sh = trusted_executable("/bin/sh");
    ASSERT_TRUE(sh) << sh.error().message;
    EXPECT_EQ(sh->front(), '/');
    char buf[4096];
    ASSERT_NE(::realpath("/bin/sh", buf), nullptr);
    EXPECT_EQ(*sh, std::string(buf)) << "the resolved path is what runs";
}

class StacksTrustTree : public ::testing::Test {
  protected:
    void SetUp() override {
        std::string tmpl = ::testing::TempDir() + "sddp-trust-XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
        dir_ = tmpl;
        // Group-writable whatever folder holds it, so that the verdict never depends on TMPDIR.
        ASSERT_EQ(::chmod(dir_.c_str(), 0775), 0);
        tool_ = dir_ + "/py-spy";
        std::ofstream(tool_) << "#!/bin/sh\ntouch " << dir_ << "/ran\n";
        ASSERT_EQ(::chmod(tool_.c_str(), 0755), 0);
        link_ = dir_ + "/gdb";
        ASSERT_EQ(::symlink("/bin/sh", link_.c_str()), 0);
    }
    void TearDown() override {
        ::unlink(link_.c_str());
        ::unlink(tool_.c_str());
        ::rmdir(dir_.c_str());
    }
    std::string dir_, tool_, link_;
};

TEST_F(StacksTrustTree, AToolInATemporaryFolderIsRefusedAsRoot) {
    // The temporary folder is writable by others (/tmp, 1777) or owned by the user running the
    // tests: either way, not a place root may run a program from.
    const auto t = trusted_executable(tool_);
    ASSERT_FALSE(t);
    EXPECT_NE(t.error().message.find(tool_ + ": "), std::string::npos) << t.error().message;
    const bool named = t.error().message.find("writable by group or others") != std::string::npos ||
                       t.error().message.find("not root") != std::string::npos;
    EXPECT_TRUE(named) << t.error().message;
    EXPECT_NE(t.error().message.find("/usr/local/bin"), std::string::npos) << "says the fix";
}

TEST_F(StacksTrustTree, ALinkToARootToolInAUserFolderIsRefusedToo) {
    // The link can be pointed elsewhere by whoever writes its folder.
    ASSERT_TRUE(trusted_executable("/bin/sh"));
    EXPECT_FALSE(trusted_executable(link_));
}

TEST_F(StacksTrustTree, PickingSkipsRefusedOnesAsRootOnly) {
    const std::vector<std::string> candidates{dir_ + "/absent", tool_, "/bin/sh"};
    const auto user = pick_executable(candidates, false);
    EXPECT_EQ(user.path, tool_);
    EXPECT_TRUE(user.refused.empty());
    const auto root = pick_executable(candidates, true);
    char buf[4096];
    ASSERT_NE(::realpath("/bin/sh", buf), nullptr);
    EXPECT_EQ(root.path, std::string(buf));
    ASSERT_EQ(root.refused.size(), 1u);
    EXPECT_EQ(root.refused[0].rfind(tool_ + ": ", 0), 0u) << root.refused[0];
    EXPECT_EQ(describe_refused(root.refused).rfind("not used as root: " + tool_, 0), 0u);
    EXPECT_TRUE(pick_executable({tool_}, true).path.empty());
    EXPECT_EQ(describe_refused({}), "");
}

TEST(StacksTrust, PathCandidatesKeepAbsoluteFoldersOnly) {
    EXPECT_EQ(path_candidates("gdb", "/usr/local/bin::bin:.:/usr/bin"),
              (std::vector<std::string>{"/usr/local/bin/gdb", "/usr/bin/gdb"}));
    EXPECT_TRUE(path_candidates("gdb", "").empty());
    EXPECT_FALSE(trusted_executable("gdb"));
    EXPECT_NE(trusted_executable("gdb").error().message.find("not an absolute path"),
              std::string::npos);
}

}  // namespace
}  // namespace sddp::stacks
