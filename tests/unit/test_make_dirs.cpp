// SPDX-License-Identifier: Apache-2.0
// make_private_directory: the --ddp=debug directory cannot be chosen by another user.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "os/make_dirs.hpp"

using namespace sddp;
namespace fs = std::filesystem;

namespace {

class PrivateDir : public ::testing::Test {
  protected:
    void SetUp() override {
        char tmpl[] = "/tmp/sddp-dirs.XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr);
        root_ = tmpl;
        fs::create_directory(root_ + "/elsewhere");
    }
    void TearDown() override {
        std::error_code ec;
        fs::remove_all(root_, ec);
    }
    static mode_t mode_of(const std::string& p) {
        struct stat st {};
        EXPECT_EQ(::lstat(p.c_str(), &st), 0) << p;
        return st.st_mode & 07777;
    }
    bool elsewhere_empty() const { return fs::is_empty(root_ + "/elsewhere"); }
    std::string root_;
};

std::string message(const Status& st) {
    return st ? std::string("(ok)") : st.error().message;
}

}  // namespace

TEST_F(PrivateDir, CreatesMissingDirectoriesOwnerOnly) {
    const std::string step = root_ + "/a/b/42.0";
    const mode_t old = ::umask(022);
    const Status st = make_private_directory(step);
    ::umask(old);
    ASSERT_TRUE(st) << message(st);
    EXPECT_EQ(mode_of(root_ + "/a"), 0700u);
    EXPECT_EQ(mode_of(root_ + "/a/b"), 0700u);
    EXPECT_EQ(mode_of(step), 0700u);
    // The step's other tasks find it made and use it.
    EXPECT_TRUE(make_private_directory(step)) << "second task of the step";
}

TEST_F(PrivateDir, PlantedLinkIsNotFollowed) {
    fs::create_directory(root_ + "/dbg", root_);  // mode of root_: 0700
    fs::create_directory_symlink(root_ + "/elsewhere", root_ + "/dbg/42.0");
    const Status st = make_private_directory(root_ + "/dbg/42.0");
    ASSERT_FALSE(st);
    EXPECT_NE(st.error().message.find(root_ + "/dbg/42.0"), std::string::npos)
        << st.error().message;
    EXPECT_NE(st.error().message.find("symbolic link"), std::string::npos) << st.error().message;
    EXPECT_TRUE(elsewhere_empty());
}

TEST_F(PrivateDir, SharedDirectoryIsRefusedByName) {
    // /tmp-like: sticky and writable by everybody, with a link someone planted there.
    const std::string shared = root_ + "/shared";
    fs::create_directory(shared);
    ASSERT_EQ(::chmod(shared.c_str(), 01777), 0);
    fs::create_directory_symlink(root_ + "/elsewhere", shared + "/42.0");
    for (const std::string& step : {shared + "/42.0", shared + "/43.0"}) {
        const Status st = make_private_directory(step);
        ASSERT_FALSE(st) << step;
        EXPECT_NE(st.error().message.find(shared + " is writable by other users (mode 1777)"),
                  std::string::npos)
            << st.error().message;
        EXPECT_NE(st.error().message.find("--ddp=debug=$HOME"), std::string::npos);
    }
    EXPECT_TRUE(elsewhere_empty());
    EXPECT_FALSE(fs::exists(shared + "/43.0"));
}

TEST_F(PrivateDir, WritableDirectoryAboveIsRefused) {
    const std::string open = root_ + "/open";
    fs::create_directories(open + "/mine");
    ASSERT_EQ(::chmod(open.c_str(), 0777), 0);
    ASSERT_EQ(::chmod((open + "/mine").c_str(), 0700), 0);
    const Status st = make_private_directory(open + "/mine/42.0");
    ASSERT_FALSE(st);
    EXPECT_NE(st.error().message.find(open + ", above the debug directory"), std::string::npos)
        << st.error().message;
}

TEST_F(PrivateDir, GroupWritableStepDirectoryIsRefused) {
    fs::create_directories(root_ + "/dbg/42.0");
    ASSERT_EQ(::chmod((root_ + "/dbg/42.0").c_str(), 0770), 0);
    const Status st = make_private_directory(root_ + "/dbg/42.0");
    ASSERT_FALSE(st);
    EXPECT_NE(st.error().message.find("writable by other users (mode 0770)"), std::string::npos)
        << st.error().message;
}

TEST_F(PrivateDir, AnotherUsersDirectoryIsRefused) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a directory to another user";
    fs::create_directories(root_ + "/theirs");
    ASSERT_EQ(::chown((root_ + "/theirs").c_str(), 65534, 65534), 0);
    Status st = make_private_directory(root_ + "/theirs/42.0");
    ASSERT_FALSE(st);
    EXPECT_NE(st.error().message.find(root_ + "/theirs belongs to uid 65534, not to you"),
              std::string::npos)
        << st.error().message;
    // A step directory made first by another user, in a directory of the caller's.
    fs::create_directories(root_ + "/dbg/42.0");
    ASSERT_EQ(::chown((root_ + "/dbg/42.0").c_str(), 65534, 65534), 0);
    st = make_private_directory(root_ + "/dbg/42.0");
    ASSERT_FALSE(st);
    EXPECT_NE(st.error().message.find("belongs to uid 65534"), std::string::npos);
}

TEST_F(PrivateDir, RelativePathIsRefused) {
    EXPECT_FALSE(make_private_directory("dbg/42.0"));
    EXPECT_FALSE(make_private_directory("/42.0"));
}
