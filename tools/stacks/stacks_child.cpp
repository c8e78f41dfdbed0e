// SPDX-License-Identifier: Apache-2.0
#include "stacks/stacks_child.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

extern char** environ;

namespace sddp::stacks {
namespace {

constexpr std::size_t kMaxOut = 8u << 20;
constexpr std::size_t kMaxErr = 1u << 20;

struct Pipe {
    int fd[2] = {-1, -1};
    ~Pipe() {
        for (int f : fd) {
            if (f >= 0) ::close(f);
        }
    }
    void close_end(int i) {
        if (fd[i] >= 0) ::close(fd[i]);
        fd[i] = -1;
    }
};

bool wait_exit(pid_t pid, int* status, std::chrono::steady_clock::time_point until) {
    for (;;) {
        const pid_t r = ::waitpid(pid, status, WNOHANG);
        if (r == pid) return true;
        if (r < 0 && errno != EINTR) return true;
        if (std::chrono::steady_clock::now() >= until) return false;
        ::usleep(20 * 1000);
    }
}

}  // namespace

ChildResult run_bounded(const std::vector<std::string>& argv, std::chrono::milliseconds budget,
                        const std::vector<std::string>& env,
                        const std::function<bool(std::string_view)>& enough) {
    ChildResult r;
    if (argv.empty()) {
        r.error = "no command";
        return r;
    }
    Pipe out;
    Pipe err;
    if (::pipe2(out.fd, O_CLOEXEC) != 0 || ::pipe2(err.fd, O_CLOEXEC) != 0) {
        r.error = std::string("pipe: ") + std::strerror(errno);
        return r;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, out.fd[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, err.fd[1], STDERR_FILENO);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
    posix_spawnattr_setpgroup(&attr, 0);
    sigset_t none;
    sigemptyset(&none);
    posix_spawnattr_setsigmask(&attr, &none);

    std::vector<char*> args;
    args.reserve(argv.size() + 1);
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    std::vector<char*> envp;
    envp.reserve(env.size() + 1);
    for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
    pid_t pid = -1;
    const int rc = ::posix_spawnp(&pid, args[0], &actions, &attr, args.data(),
                                  env.empty() ? environ : envp.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    out.close_end(1);
    err.close_end(1);
    if (rc != 0) {
        r.error = argv[0] + ": " + std::strerror(rc);
        return r;
    }
    r.started = true;

    auto deadline = std::chrono::steady_clock::now() + budget;
    bool complete = false;
    pollfd fds[2] = {{out.fd[0], POLLIN, 0}, {err.fd[0], POLLIN, 0}};
    while (fds[0].fd >= 0 || fds[1].fd >= 0) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            r.timed_out = true;
            break;
        }
        const int n = ::poll(fds, 2, static_cast<int>(left.count()));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) break;
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd < 0 || fds[i].revents == 0) continue;
            char buf[8192];
            const ssize_t got = ::read(fds[i].fd, buf, sizeof buf);
            if (got < 0 && errno == EINTR) continue;
            if (got <= 0) {
                fds[i].fd = -1;
                continue;
            }
            std::string& sink = i == 0 ? r.out : r.err;
            if (sink.size() < (i == 0 ? kMaxOut : kMaxErr)) {
                sink.append(buf, static_cast<std::size_t>(got));
            }
            if (i == 0 && enough && !complete && enough(r.out)) {
                complete = true;
                deadline =
                    std::min(deadline, std::chrono::steady_clock::now() + std::chrono::seconds(2));
            }
        }
    }
    int status = 0;
    // Both pipes closed is not an exit: a child may close them and still hang.
    if (!r.timed_out && !wait_exit(pid, &status, deadline)) r.timed_out = true;
    if (r.timed_out) {
        ::kill(-pid, SIGTERM);
        if (!wait_exit(pid, &status, std::chrono::steady_clock::now() + std::chrono::seconds(2))) {
            ::kill(-pid, SIGKILL);
            // SIGKILL waits for a task in D to leave the kernel call, which may be never.
            r.unreaped = !wait_exit(pid, &status,
                                    std::chrono::steady_clock::now() + std::chrono::seconds(1));
        }
        ::kill(-pid, SIGKILL);  // what the leader left behind in its group
        return r;
    }
    if (WIFEXITED(status)) r.exit_status = WEXITSTATUS(status);
    return r;
}

std::string last_line(const std::string& text) {
    std::string last;
    std::size_t start = 0;
    while (start < text.size()) {
        auto end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        const auto line = text.substr(start, end - start);
        if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
        start = end + 1;
    }
    return last;
}

}  // namespace sddp::stacks
