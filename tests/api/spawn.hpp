// SPDX-License-Identifier: Apache-2.0
// Forking N ranks on this host for the API tests: each child gets a clean launcher
// environment (no inherited SLURM_*, PMI_*, OMPI_* or DDP variables), runs a function, and
// exits with its status; the parent waits with a deadline and kills stragglers.
#pragma once

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace sddp_test {

using Env = std::map<std::string, std::string>;

inline void clean_launcher_env() {
    static const char* kPrefixes[] = {"SLURM_", "PMI_", "OMPI_", "PMIX_", "MPI_LOCAL"};
    static const char* kNames[] = {
        "RANK",        "WORLD_SIZE",  "LOCAL_RANK",     "LOCAL_WORLD_SIZE",
        "NODE_RANK",   "GROUP_RANK",  "NNODES",         "GROUP_WORLD_SIZE",
        "MASTER_ADDR", "MASTER_PORT", "SLURMD_NODENAME"};
    std::vector<std::string> drop;
    for (char** e = environ; *e; ++e) {
        const std::string kv = *e;
        const std::string name = kv.substr(0, kv.find('='));
        for (const char* p : kPrefixes) {
            if (name.rfind(p, 0) == 0) drop.push_back(name);
        }
        for (const char* n : kNames) {
            if (name == n) drop.push_back(name);
        }
    }
    for (const auto& n : drop) unsetenv(n.c_str());
}

// A port nobody listens on right now (the kernel picks it; tiny race, fine for tests).
inline int free_port() {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
        std::perror("free_port");
        std::exit(2);
    }
    close(fd);
    return ntohs(a.sin_port);
}

// Runs body(rank) in `n` children with env_of(rank) set. Returns each child's exit status
// (-signal when killed, -999 when it had to be killed at the deadline).
inline std::vector<int> run_ranks(int n, const std::function<Env(int)>& env_of,
                                  const std::function<int(int)>& body,
                                  std::chrono::seconds deadline = std::chrono::seconds(60)) {
    std::fflush(stdout);
    std::fflush(stderr);
    std::vector<pid_t> pids;
    for (int r = 0; r < n; ++r) {
        const pid_t pid = fork();
        if (pid < 0) {
            std::perror("fork");
            std::exit(2);
        }
        if (pid == 0) {
            clean_launcher_env();
            for (const auto& [k, v] : env_of(r)) setenv(k.c_str(), v.c_str(), 1);
            const int rc = body(r);
            std::fflush(stdout);
            std::fflush(stderr);
            _exit(rc);
        }
        pids.push_back(pid);
    }
    std::vector<int> status(static_cast<std::size_t>(n), -999);
    std::vector<bool> done(static_cast<std::size_t>(n), false);
    const auto end = std::chrono::steady_clock::now() + deadline;
    int left = n;
    while (left > 0 && std::chrono::steady_clock::now() < end) {
        for (int r = 0; r < n; ++r) {
            if (done[r]) continue;
            int st = 0;
            if (waitpid(pids[r], &st, WNOHANG) == pids[r]) {
                done[r] = true;
                --left;
                status[r] = WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st);
            }
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    for (int r = 0; r < n; ++r) {
        if (done[r]) continue;
        kill(pids[r], SIGKILL);
        waitpid(pids[r], nullptr, 0);
        std::fprintf(stderr, "rank %d killed at the test deadline\n", r);
    }
    return status;
}

inline bool all_zero(const std::vector<int>& st) {
    bool ok = true;
    for (std::size_t r = 0; r < st.size(); ++r) {
        if (st[r] != 0) {
            std::fprintf(stderr, "rank %zu exited with %d\n", r, st[r]);
            ok = false;
        }
    }
    return ok;
}

}  // namespace sddp_test
