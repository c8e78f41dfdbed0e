// SPDX-License-Identifier: Apache-2.0
#include "api/debug_stacks.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <thread>
#include <vector>

#include "core/base/log.hpp"
#include "core/contract/contract.hpp"

extern char** environ;

namespace sddp {
namespace {

// The error path waits at most this long for the stacks; the tools get less, so that the
// report is complete when it ends in time.
constexpr auto kBudget = std::chrono::seconds(5);
constexpr const char* kToolSeconds = "--timeout=3";

#ifndef SDDP_CHECK_TOOL
#define SDDP_CHECK_TOOL "/usr/bin/slurm-ddp"
#endif

}  // namespace

void write_debug_stacks(const EnvLookup& env, const std::string& host) {
    const auto dir = env(contract::kDebugDirVar);
    const auto job = env("SLURM_JOB_ID");
    const auto step = env("SLURM_STEP_ID");
    if (!dir || dir->empty() || !job || !step) return;
    const std::string path = *dir + "/stacks." + host + ".txt";
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return;  // another task of this node writes it, or the directory is gone
    std::string tool = env(contract::kCheckToolVar).value_or(SDDP_CHECK_TOOL);
    std::string a0 = "slurm-ddp", a1 = "stacks", a2 = "--local", a3 = *job + "." + *step,
                a4 = "--report", a5 = kToolSeconds;
    char* argv[] = {a0.data(), a1.data(), a2.data(), a3.data(), a4.data(), a5.data(), nullptr};
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, fd, STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, fd, STDERR_FILENO);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
    pid_t pid = -1;
    const int rc = ::posix_spawn(&pid, tool.c_str(), &actions, &attr, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    if (rc != 0) {
        const std::string why = "stacks not written: cannot run " + tool + " (set " +
                                contract::kCheckToolVar + " to the slurm-ddp binary)\n";
        (void)!::write(fd, why.data(), why.size());
        ::close(fd);
        return;
    }
    ::close(fd);
    const auto deadline = std::chrono::steady_clock::now() + kBudget;
    int status = 0;
    for (;;) {
        const pid_t r = ::waitpid(pid, &status, WNOHANG);
        if (r == pid || (r < 0 && errno != EINTR)) break;
        if (std::chrono::steady_clock::now() >= deadline) {
            ::kill(-pid, SIGKILL);
            while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
            }
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    log(LogLevel::info, "rendezvous timed out: stacks of this node's tasks in " + path);
}

}  // namespace sddp
