// SPDX-License-Identifier: Apache-2.0
#include "task_check.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "core/contract/contract.hpp"
#include "plugin_log.hpp"

#ifndef SDDP_CHECK_TOOL
#define SDDP_CHECK_TOOL "/usr/bin/slurm-ddp"
#endif

namespace sddp::plugin {
namespace {

// The tool: contract::kCheckToolVar from the job's environment (a build tree, tests), else where
// the package installs it. The task runs as the user, so the user choosing it grants nothing.
std::string tool_path(spank_t sp) {
    char buf[4096] = {};
    if (spank_getenv(sp, contract::kCheckToolVar, buf, sizeof buf) == ESPANK_SUCCESS && buf[0]) {
        return buf;
    }
    return SDDP_CHECK_TOOL;
}

int refuse(const std::string& why) {
    write_task_stderr("slurm-ddp: --ddp=check: " + why + "; the program was not started\n");
    return -1;
}

}  // namespace

int run_task_check(spank_t sp, std::uint32_t timeout_s) {
    char** envp = nullptr;
    if (spank_get_item(sp, S_JOB_ENV, &envp) != ESPANK_SUCCESS || !envp) {
        return refuse("cannot read the task's environment");
    }
    // The check's rendezvous gets a round of its own: the program's rendezvous that follows then
    // uses another node-local socket name, so nobody who saw the check's name can squat the
    // program's in between.
    const std::string round = std::string(contract::kRendezvousRoundVar) + "=check";
    std::vector<char*> child_env;
    for (char** e = envp; *e != nullptr; ++e) {
        if (std::strncmp(*e, round.c_str(), std::strlen(contract::kRendezvousRoundVar) + 1) != 0)
            child_env.push_back(*e);
    }
    child_env.push_back(const_cast<char*>(round.c_str()));
    child_env.push_back(nullptr);
    const std::string tool = tool_path(sp);
    const std::string timeout = "--timeout=" + std::to_string(timeout_s);
    const char* argv[] = {"slurm-ddp", "check", "--before-program", timeout.c_str(), nullptr};
    const pid_t pid = ::fork();
    if (pid < 0) return refuse(std::string("cannot fork: ") + std::strerror(errno));
    if (pid == 0) {
        ::execve(tool.c_str(), const_cast<char* const*>(argv), child_env.data());
        const std::string msg = "slurm-ddp: --ddp=check: cannot run " + tool + ": " +
                                std::strerror(errno) + " (install slurm-ddp or set " +
                                contract::kCheckToolVar + ")\n";
        (void)!::write(STDERR_FILENO, msg.data(), msg.size());
        ::_exit(127);
    }
    // The check bounds itself; the margin covers its start and its last report.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s) +
                          std::chrono::seconds(5);
    int status = 0;
    for (;;) {
        const pid_t r = ::waitpid(pid, &status, WNOHANG);
        if (r == pid) break;
        if (r < 0 && errno != EINTR) return refuse(std::string("waitpid: ") + std::strerror(errno));
        if (std::chrono::steady_clock::now() >= deadline) {
            ::kill(pid, SIGKILL);
            while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
            }
            return refuse("the check ran past " + std::to_string(timeout_s + 5) + " s");
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return 0;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127) return -1;  // the child said why
    return refuse(WIFEXITED(status)
                      ? "the step failed its check (above)"
                      : "the check was killed by signal " + std::to_string(WTERMSIG(status)));
}

}  // namespace sddp::plugin
