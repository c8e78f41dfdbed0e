// SPDX-License-Identifier: Apache-2.0
#include "env/job_gpus.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "core/base/numbers.hpp"
#include "core/gpu/gpu_binding.hpp"
#include "core/slurm/job_gres.hpp"

extern char** environ;

namespace sddp::cli {
namespace {

// `scontrol show job -d JOB`'s output, or nullopt when it fails or outlasts `budget` (the
// controller may be unreachable from a node; a hung scontrol is killed, by its own pid).
std::optional<std::string> show_job(const std::string& job, std::chrono::milliseconds budget) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return std::nullopt;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    std::string a0 = "scontrol", a1 = "show", a2 = "job", a3 = "-d", a4 = job;
    char* argv[] = {a0.data(), a1.data(), a2.data(), a3.data(), a4.data(), nullptr};
    pid_t pid = -1;
    const int rc = ::posix_spawnp(&pid, "scontrol", &actions, nullptr, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(fds[1]);
    if (rc != 0) {
        ::close(fds[0]);
        return std::nullopt;
    }
    std::string out;
    bool complete = false;
    const auto deadline = std::chrono::steady_clock::now() + budget;
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) break;
        pollfd p{fds[0], POLLIN, 0};
        const int n = ::poll(&p, 1, static_cast<int>(left.count()));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        char buf[4096];
        const ssize_t got = ::read(fds[0], buf, sizeof buf);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) {
            complete = got == 0;
            break;
        }
        if (out.size() < (1u << 20)) out.append(buf, static_cast<std::size_t>(got));
    }
    ::close(fds[0]);
    if (!complete) ::kill(pid, SIGKILL);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!complete || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::nullopt;
    return out;
}

}  // namespace

EnvLookup step_gpu_env_from_job(const EnvLookup& env, std::chrono::milliseconds budget) {
    const auto none = [] {
        return EnvLookup([](std::string_view) { return std::optional<std::string>(); });
    };
    const SlurmGpuEnv task = read_slurm_gpu_env(env, EnvLookup());
    const auto job = env("SLURM_JOB_ID");
    const auto node = env("SLURMD_NODENAME");
    if (!task.task_visible || !task.gpus_on_node || !job || !node) return none();
    const auto on_node = parse_decimal(*task.gpus_on_node, 1u << 16);
    const auto own = static_cast<std::uint64_t>(
        std::count(task.task_visible->begin(), task.task_visible->end(), ',') + 1);
    if (!on_node || *on_node <= own) return none();  // not narrowed: the task's list is the step's
    const auto text = show_job(*job, budget);
    if (!text) return none();
    const auto indices = job_gpu_indices(*text, *node);
    if (!indices || static_cast<std::uint64_t>(std::count(indices->begin(), indices->end(), ',') +
                                               1) != *on_node) {
        return none();  // the step holds only some of the job's GPUs here: not known which
    }
    return map_env({{task.visible_var, *indices}, {"SLURM_STEP_GPUS", *indices}});
}

}  // namespace sddp::cli
