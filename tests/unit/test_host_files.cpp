// SPDX-License-Identifier: Apache-2.0
// read_hostfile: SLURM_HOSTFILE is opened only under --distribution=arbitrary, and never blocks:
// a FIFO (open(2) without O_NONBLOCK waits for a writer forever) or an oversized file is
// refused with the reason. Real files and a real FIFO, each call in a child with a deadline.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "os/host_files.hpp"

using namespace sddp;

namespace {

struct TempDir {
    std::string path;
    TempDir() {
        char tmpl[] = "/tmp/sddp-hostfile.XXXXXX";
        const char* p = ::mkdtemp(tmpl);
        path = p != nullptr ? p : "";
    }
    ~TempDir() {
        std::error_code ec;
        if (!path.empty()) std::filesystem::remove_all(path, ec);
    }
};

// Runs read_hostfile in a child; "hung" when it does not return within 5 s.
std::string outcome(std::string_view distribution, const std::string& path) {
    int fds[2];
    if (::pipe(fds) != 0) return "pipe failed";
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::close(fds[0]);
        const auto r = read_hostfile(distribution, path);
        const std::string out = r.text ? "text:" + *r.text : "problem:" + r.problem;
        (void)!::write(fds[1], out.data(), out.size());
        ::_exit(0);
    }
    ::close(fds[1]);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    int status = 0;
    while (::waitpid(pid, &status, WNOHANG) == 0) {
        if (std::chrono::steady_clock::now() > deadline) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, &status, 0);
            ::close(fds[0]);
            return "hung";
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::string out;
    char buf[256];
    ssize_t n;
    while ((n = ::read(fds[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
    ::close(fds[0]);
    return out;
}

}  // namespace

TEST(HostFiles, FifoIsRefusedWithoutBlocking) {
    TempDir dir;
    const std::string fifo = dir.path + "/fifo";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    EXPECT_EQ(outcome("arbitrary", fifo), "problem:is not a regular file");
    // Not arbitrary: never opened (a FIFO would not even be looked at).
    EXPECT_EQ(outcome("block", fifo), "problem:");
    EXPECT_EQ(outcome("cyclic:cyclic", fifo), "problem:");
}

TEST(HostFiles, RegularFileOnlyUnderArbitrary) {
    TempDir dir;
    const std::string file = dir.path + "/hosts";
    std::ofstream(file) << "n2*2\nn1\n";
    EXPECT_EQ(outcome("arbitrary", file), "text:n2*2\nn1\n");
    EXPECT_EQ(outcome("arbitrary:block", file), "text:n2*2\nn1\n");
    EXPECT_EQ(outcome("block", file), "problem:");
    EXPECT_EQ(outcome("arbitrary", dir.path + "/absent").rfind("problem:cannot be opened", 0), 0u);
    EXPECT_EQ(outcome("arbitrary", dir.path), "problem:is not a regular file");
}

TEST(HostFiles, OversizedFileIsRefused) {
    TempDir dir;
    const std::string file = dir.path + "/big";
    {
        std::ofstream out(file);
        const std::string line(1023, 'n');
        for (std::size_t i = 0; i <= kMaxHostfileBytes / 1024; ++i) out << line << '\n';
    }
    EXPECT_EQ(outcome("arbitrary", file).rfind("problem:is larger than", 0), 0u);
}
