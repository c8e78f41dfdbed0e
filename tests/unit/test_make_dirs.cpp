// SPDX-License-Identifier: Apache-2.0
// make_private_directory: the --ddp=debug directory cannot be chosen by another user.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <utility>

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

// make_private_directory(path) in a child that runs as `uid`: whether it succeeded, and its
// message. The owner rules compare with the caller's uid, which the tests (as root) cannot
// otherwise be but root.
std::pair<bool, std::string> as_user(uid_t uid, const std::string& path) {
    std::array<int, 2> fds{};
    if (::pipe(fds.data()) != 0) return {false, "pipe failed"};
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::close(fds[0]);
        if (::setgid(uid) != 0 || ::setuid(uid) != 0) ::_exit(2);
        const Status st = make_private_directory(path);
        const std::string m = message(st);
        (void)!::write(fds[1], m.data(), m.size());
        ::_exit(st ? 0 : 1);
    }
    ::close(fds[1]);
    std::string out;
    char buf[512];
    for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) out.append(buf, n);
    ::close(fds[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) == 2) return {false, "child failed: " + out};
    return {WEXITSTATUS(status) == 0, out};
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
    const Status dots = make_private_directory(root_ + "/a/../b/42.0");
    ASSERT_FALSE(dots);
    EXPECT_NE(dots.error().message.find("has a '..' component"), std::string::npos)
        << dots.error().message;
    EXPECT_FALSE(fs::exists(root_ + "/a"));
}

TEST_F(PrivateDir, LinkOnTheWayIsRefusedAndNotFollowed) {
    // A link to a directory that would pass every check: the link itself is what is refused,
    // since whoever can change it chooses where the logs go.
    fs::create_directory_symlink(root_ + "/elsewhere", root_ + "/link");
    for (const std::string& step : {root_ + "/link/a/42.0", root_ + "/link/42.0"}) {
        const Status st = make_private_directory(step);
        ASSERT_FALSE(st) << step;
        EXPECT_NE(st.error().message.find(root_ + "/link is a symbolic link; it was not followed"),
                  std::string::npos)
            << st.error().message;
        EXPECT_NE(st.error().message.find("realpath"), std::string::npos) << st.error().message;
    }
    EXPECT_TRUE(elsewhere_empty()) << "something was created behind the link";
    EXPECT_TRUE(make_private_directory(root_ + "/elsewhere/a/42.0")) << "the real path works";
}

TEST_F(PrivateDir, FileOnTheWayIsNamed) {
    ASSERT_EQ(::close(::creat((root_ + "/file").c_str(), 0600)), 0);
    const Status st = make_private_directory(root_ + "/file/42.0");
    ASSERT_FALSE(st);
    EXPECT_NE(st.error().message.find(root_ + "/file exists and is not a directory"),
              std::string::npos)
        << st.error().message;
}

TEST_F(PrivateDir, StickyDirectoryAboveIsAcceptedOnlyFromRootOrTheCaller) {
    // /tmp-like: sticky, world-writable, root's (here the caller's when not run as root).
    const std::string tmp = root_ + "/tmp";
    fs::create_directory(tmp);
    ASSERT_EQ(::chmod(tmp.c_str(), 01777), 0);
    EXPECT_TRUE(make_private_directory(tmp + "/mine/dbg/42.0"));
    EXPECT_EQ(mode_of(tmp + "/mine"), 0700u);
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a directory to another user";
    // The same, but another user's: that user may rename mine/ despite the sticky bit.
    const std::string theirs = root_ + "/theirs";
    fs::create_directory(theirs);
    ASSERT_EQ(::chmod(theirs.c_str(), 01777), 0);
    ASSERT_EQ(::chown(theirs.c_str(), 65534, 65534), 0);
    const Status st = make_private_directory(theirs + "/mine/dbg/42.0");
    ASSERT_FALSE(st);
    EXPECT_NE(
        st.error().message.find(theirs + ", above the debug directory, is writable by other users "
                                         "(mode 1777) and belongs to uid 65534"),
        std::string::npos)
        << st.error().message;
    EXPECT_FALSE(fs::exists(theirs + "/mine")) << "created before the refusal";
}

TEST_F(PrivateDir, OwnerRulesAsAnotherUser) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to run as another user";
    ASSERT_EQ(::chmod(root_.c_str(), 0755), 0);
    const auto sticky = [this](const std::string& name, uid_t owner) {
        std::string d = root_ + "/" + name;
        fs::create_directory(d);
        EXPECT_EQ(::chmod(d.c_str(), 01777), 0);
        EXPECT_EQ(::chown(d.c_str(), owner, owner), 0);
        return d;
    };
    const std::string roots = sticky("roots", 0);
    const std::string callers = sticky("callers", 65534);
    const std::string others = sticky("others", 65533);
    auto [ok_root, m_root] = as_user(65534, roots + "/u/dbg/42.0");
    EXPECT_TRUE(ok_root) << m_root;
    auto [ok_own, m_own] = as_user(65534, callers + "/u/dbg/42.0");
    EXPECT_TRUE(ok_own) << m_own;
    auto [ok_other, m_other] = as_user(65534, others + "/u/dbg/42.0");
    EXPECT_FALSE(ok_other);
    EXPECT_NE(m_other.find(others + ", above the debug directory, is writable by other users "
                                    "(mode 1777) and belongs to uid 65533"),
              std::string::npos)
        << m_other;
    // The caller's own directory in root's sticky one, made by the walk: the caller's, 0700.
    struct stat st {};
    ASSERT_EQ(::stat((roots + "/u").c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, 65534u);
    EXPECT_EQ(st.st_mode & 07777, 0700u);
}
