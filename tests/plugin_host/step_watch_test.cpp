// SPDX-License-Identifier: Apache-2.0
// The step watch (spank_plugin/step_watch.cpp) in the process layout slurmstepd gives it, without
// Slurm: a "slurmstepd" process starts the watch, forks the tasks, and local task 0 clones the
// watcher, which becomes slurmstepd's child as it is under Slurm. Each scenario runs in a
// slurmstepd of its own (the watch is one per process) and checks what the hooks would see:
// the signals the watcher reports or still holds, its death with the step, its leaving once the
// node's tasks ended (and, as under srun --wait-for-children, once task 0's own process ended),
// and the delayed action. Exit status: the number of failed checks.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>

#include "step_watch.hpp"

// plugin_log.cpp writes through Slurm's log functions; slurmstepd provides them, here stderr.
extern "C" {
#define SDDP_LOG_TO_STDERR(name)                \
    void name(const char* fmt, ...) {           \
        va_list ap;                             \
        va_start(ap, fmt);                      \
        std::fprintf(stderr, "  [" #name "] "); \
        std::vfprintf(stderr, fmt, ap);         \
        std::fprintf(stderr, "\n");             \
        va_end(ap);                             \
    }
SDDP_LOG_TO_STDERR(slurm_error)
SDDP_LOG_TO_STDERR(slurm_info)
SDDP_LOG_TO_STDERR(slurm_verbose)
SDDP_LOG_TO_STDERR(slurm_debug)
}

namespace {

using namespace std::chrono_literals;
using sddp::plugin::checkpoint_signalled;
using sddp::plugin::note_task_end;
using sddp::plugin::run_later;
using sddp::plugin::start_step_watch;
using sddp::plugin::start_watcher;
using sddp::plugin::step_signal;
using sddp::plugin::step_signal_within;
using sddp::plugin::stop_step_watch;
using sddp::plugin::watcher_gone;

int g_failures = 0;

void check(bool ok, const std::string& what) {
    std::printf("%s: %s\n", ok ? "ok" : "FAIL", what.c_str());
    std::fflush(stdout);
    if (!ok) ++g_failures;
}

bool eventually(const std::function<bool()>& cond, std::chrono::milliseconds bound = 3000ms) {
    const auto end = std::chrono::steady_clock::now() + bound;
    while (!cond()) {
        if (std::chrono::steady_clock::now() > end) return false;
        std::this_thread::sleep_for(5ms);
    }
    return true;
}

// "S", "Z"... of /proc/PID/stat, and its parent; empty when gone.
std::string proc_state(pid_t pid, pid_t* ppid = nullptr) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto close = text.rfind(')');
    if (close == std::string::npos) return "";
    std::istringstream rest(text.substr(close + 1));
    std::string state;
    pid_t parent = 0;
    rest >> state >> parent;
    if (ppid != nullptr) *ppid = parent;
    return state;
}

std::string comm_of(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/comm");
    std::string c;
    std::getline(in, c);
    return c;
}

// The watcher: this process's child named slurm-ddp-watch that has not ended.
pid_t find_watcher() {
    DIR* d = opendir("/proc");
    pid_t found = 0;
    while (d != nullptr && found == 0) {
        const dirent* e = readdir(d);
        if (e == nullptr) break;
        const pid_t pid = static_cast<pid_t>(std::atoi(e->d_name));
        pid_t parent = 0;
        if (pid <= 0) continue;
        const std::string state = proc_state(pid, &parent);
        if (parent == getpid() && comm_of(pid) == "slurm-ddp-watch" && state != "Z") found = pid;
    }
    if (d != nullptr) closedir(d);
    return found;
}

// Whether `pid` (our child) has ended: reaped here, as slurmstepd reaps every child.
bool ended(pid_t pid) {
    int status = 0;
    const pid_t r = waitpid(pid, &status, WNOHANG);
    return r == pid || (r < 0 && errno == ECHILD);
}

// A task: task 0 starts the watcher, as task_init does; then each execs its program (which
// closes what the watch keeps open on exec) and runs until it is killed.
pid_t fork_task(bool local_task_0) {
    const pid_t pid = fork();
    if (pid == 0) {
        if (local_task_0) start_watcher();
        execl("/bin/sleep", "sleep", "600", static_cast<char*>(nullptr));
        _exit(127);
    }
    return pid;
}

struct Node {
    pid_t task0 = 0;
    pid_t task1 = 0;
    pid_t watcher = 0;
};

// The start every scenario shares: the watch for 2 local tasks, both tasks, the watcher up.
Node start_node() {
    Node n;
    check(start_step_watch(2, getuid()), "the watch starts");
    n.task0 = fork_task(true);
    n.task1 = fork_task(false);
    check(eventually([&] { return (n.watcher = find_watcher()) != 0; }),
          "task 0 leaves a watcher, a child of slurmstepd named slurm-ddp-watch");
    return n;
}

void end_task(pid_t pid, std::uint32_t local_id) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    note_task_end(local_id);
}

void scenario_signals() {
    Node n = start_node();
    check(step_signal() == 0 && !checkpoint_signalled(), "no signal yet");
    check(!watcher_gone(), "the watcher is there");
    kill(n.watcher, SIGUSR1);
    check(eventually([] { return step_signal() == SIGUSR1; }), "SIGUSR1 to the step is seen");
    check(checkpoint_signalled(), "SIGUSR1 is the checkpoint signal (requeue)");
    kill(n.watcher, SIGTERM);
    std::this_thread::sleep_for(50ms);
    check(step_signal() == SIGUSR1, "the first signal stays the step's signal");
    check(!watcher_gone() && proc_state(n.watcher) != "", "the watcher lives on through signals");
    end_task(n.task1, 1);
    check(proc_state(n.watcher) != "" && !ended(n.watcher), "one task left: the watcher stays");
    end_task(n.task0, 0);
    check(eventually([&] { return ended(n.watcher); }),
          "the node's tasks ended: the watcher leaves");
    check(!watcher_gone(), "a watcher told to go is not taken for one killed with the step");
    stop_step_watch();
}

void scenario_pending() {
    Node n = start_node();
    // Stopped, the watcher cannot read its signal: the signal waits in its pending set, where
    // a task ending at that moment must still see it.
    kill(n.watcher, SIGSTOP);
    check(eventually([&] { return proc_state(n.watcher) == "T"; }), "the watcher is stopped");
    kill(n.watcher, SIGTERM);
    check(eventually([] { return step_signal() == SIGTERM; }),
          "a SIGTERM the watcher has not read yet is the step's signal");
    check(!checkpoint_signalled(), "SIGTERM is no checkpoint signal");
    kill(n.watcher, SIGCONT);
    end_task(n.task0, 0);
    end_task(n.task1, 1);
    check(eventually([&] { return ended(n.watcher); }), "the watcher leaves after the tasks");
    stop_step_watch();
}

void scenario_grace() {
    // A rank that exits on the step's SIGTERM can be seen ending before the watcher's note: the
    // failure report gives the watcher a moment, and no longer than that when nothing comes.
    Node n = start_node();
    auto t0 = std::chrono::steady_clock::now();
    check(step_signal_within(100ms) == 0, "no signal: none within the grace");
    const auto waited = std::chrono::steady_clock::now() - t0;
    check(waited >= 100ms && waited < 1000ms, "and the grace is waited once, bounded");
    std::thread later([&] {
        std::this_thread::sleep_for(50ms);
        kill(n.watcher, SIGTERM);
    });
    t0 = std::chrono::steady_clock::now();
    const int sig = step_signal_within(3000ms);
    const auto took = std::chrono::steady_clock::now() - t0;
    later.join();
    check(sig == SIGTERM, "a SIGTERM that comes during the grace is the step's signal");
    check(took < 2000ms, "seen when it comes, not at the end of the grace");
    end_task(n.task0, 0);
    end_task(n.task1, 1);
    check(eventually([&] { return ended(n.watcher); }), "the watcher leaves after the tasks");
    stop_step_watch();
}

void scenario_killed_with_step() {
    Node n = start_node();
    kill(n.watcher, SIGKILL);  // what a cancelled step does to every process in it
    check(eventually([&] { return ended(n.watcher); }), "the watcher died");
    check(eventually([] { return watcher_gone(); }), "a watcher killed with the step is gone");
    check(step_signal() == 0, "SIGKILL is no signal the watcher reports");
    end_task(n.task0, 0);
    end_task(n.task1, 1);
    stop_step_watch();
}

void scenario_task0_ends_last() {
    // srun --wait-for-children: task 0 counts as running while its cgroup holds anything, the
    // watcher included, so the watcher must leave once task 0's own process has ended and the
    // other tasks are done, before anyone tells it that task 0 ended.
    Node n = start_node();
    end_task(n.task1, 1);
    std::this_thread::sleep_for(100ms);
    check(!ended(n.watcher), "task 0 still runs: the watcher stays");
    kill(n.task0, SIGKILL);
    waitpid(n.task0, nullptr, 0);
    check(eventually([&] { return ended(n.watcher); }),
          "task 0's process ended, the other tasks too: the watcher leaves by itself");
    note_task_end(0);
    check(!watcher_gone(), "and is not taken for one killed with the step");
    stop_step_watch();
}

void scenario_delayed_action() {
    Node n = start_node();
    std::atomic<int> runs{0};
    const auto asked = std::chrono::steady_clock::now();
    std::chrono::steady_clock::time_point ran{};
    check(run_later(200ms,
                    [&] {
                        ran = std::chrono::steady_clock::now();
                        ++runs;
                    }),
          "an action is scheduled");
    check(!run_later(10ms, [&] { runs += 10; }), "one pending action at a time");
    // Stopping waits for the action: it runs even when the node's step ends first.
    end_task(n.task0, 0);
    end_task(n.task1, 1);
    stop_step_watch();
    check(runs == 1, "the action ran once, before the watch stopped");
    check(ran - asked >= 200ms, "not before its delay");
    eventually([&] { return ended(n.watcher); });
}

int in_slurmstepd(void (*scenario)(), const char* name) {
    std::printf("--- %s\n", name);
    std::fflush(stdout);
    const pid_t pid = fork();
    if (pid == 0) {
        scenario();
        std::fflush(stdout);
        _exit(g_failures);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    const int failures = WIFEXITED(status) ? WEXITSTATUS(status) : 100;
    if (!WIFEXITED(status)) std::printf("FAIL: %s: the slurmstepd process died\n", name);
    return failures;
}

}  // namespace

int main() {
    int failures = 0;
    failures += in_slurmstepd(scenario_signals, "signals the watcher reports");
    failures += in_slurmstepd(scenario_grace, "a signal that comes during a failure's grace");
    failures += in_slurmstepd(scenario_pending, "a signal still waiting for the watcher");
    failures += in_slurmstepd(scenario_killed_with_step, "the watcher killed with the step");
    failures += in_slurmstepd(scenario_task0_ends_last, "task 0's own process ends last");
    failures += in_slurmstepd(scenario_delayed_action, "the delayed action");
    std::printf("%s\n", failures == 0 ? "all checks passed" : "some checks failed");
    return failures == 0 ? 0 : 1;
}
