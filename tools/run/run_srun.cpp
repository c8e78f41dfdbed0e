// SPDX-License-Identifier: Apache-2.0
#include "run/run_srun.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <functional>
#include <set>
#include <string_view>
#include <utility>

extern char** environ;  // NOLINT(readability-redundant-declaration): not in every unistd.h

namespace sddp::run {
namespace {

using Clock = std::chrono::steady_clock;

// How long srun has to cancel the step after SIGTERM before it is killed; Slurm's own
// KillWait is 30 s by default.
constexpr auto kStopGrace = std::chrono::seconds(30);
// How long the stderr pipe may stay open after srun ended (a process srun left behind holding
// it); the step is over, so what such a process prints later is not this run's.
constexpr auto kDrainLimit = std::chrono::seconds(5);
// How long srun runs before it gets a SIGUSR1/SIGUSR2 of ours. srun passes a signal only to
// tasks it has launched and drops one that comes before (22.05: launch_p_fwd_signal without a
// job list yet; a node whose tasks are not running answers ESLURMD_JOB_NOTRUNNING, taken as
// "ended"): sent the moment srun blocked it, 3 of 3 reached no task on the project's cluster,
// where tasks start about 40 ms after srun. A second covers the launch of most steps.
constexpr auto kLaunchSettle = std::chrono::seconds(1);

Error sys_error(const std::string& what) {
    return make_error(Errc::io, what + ": " + std::strerror(errno));
}

void write_all(int fd, const char* data, std::size_t size) {
    while (size > 0) {
        const ssize_t n = ::write(fd, data, size);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) {
            pollfd p{fd, POLLOUT, 0};
            ::poll(&p, 1, 1000);
            continue;
        }
        if (n <= 0) return;  // stderr is gone; srun still runs to its end
        data += n;
        size -= static_cast<std::size_t>(n);
    }
}

int shell_status(int wait_status) {
    if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
    if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
    return 1;
}

// The environment srun starts with: ours, less `unset`, with `extra` ("NAME=value") replacing
// same names.
std::vector<std::string> child_environment(const std::vector<std::string>& extra,
                                           const std::vector<std::string>& unset) {
    std::set<std::string> names(unset.begin(), unset.end());
    for (const auto& e : extra) names.insert(e.substr(0, e.find('=')));
    std::vector<std::string> out;
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
        const std::string entry(*e);
        if (names.count(entry.substr(0, entry.find('='))) == 0) out.push_back(entry);
    }
    out.insert(out.end(), extra.begin(), extra.end());
    return out;
}

std::vector<char*> c_strings(std::vector<std::string>& v) {
    std::vector<char*> out(v.size() + 1, nullptr);
    std::transform(v.begin(), v.end(), out.begin(), [](std::string& s) { return s.data(); });
    return out;
}

class Fd {
  public:
    explicit Fd(int fd = -1) : fd_(fd) {}
    ~Fd() { reset(); }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    int get() const { return fd_; }
    void reset() {
        if (fd_ >= 0) ::close(fd_);
        fd_ = -1;
    }

  private:
    int fd_;
};

// One pipe from srun: its bytes go to our stderr as they come, its lines to `on_line`.
class Stream {
  public:
    using OnLine = std::function<void(std::string_view)>;
    Stream(int fd, OnLine on_line) : fd_(fd), on_line_(std::move(on_line)) {
        if (fd_ >= 0) ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) | O_NONBLOCK);
    }
    bool open() const { return fd_ >= 0; }
    int fd() const { return fd_; }  // -1 once closed: poll skips it

    // After poll said `revents`: reads what there is; `mid_line` says whether the last byte
    // written to our stderr (from either stream) ended a line.
    void pass_on(short revents, std::vector<char>& buf, bool& mid_line) {
        if (fd_ < 0 || (revents & (POLLIN | POLLHUP | POLLERR)) == 0) return;
        for (;;) {
            const ssize_t n = ::read(fd_, buf.data(), buf.size());
            if (n > 0) {
                const auto size = static_cast<std::size_t>(n);
                write_all(STDERR_FILENO, buf.data(), size);
                mid_line = buf[size - 1] != '\n';
                lines_.feed(std::string_view(buf.data(), size), on_line_);
                continue;
            }
            if (n < 0 && errno == EINTR) continue;
            if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) fd_ = -1;  // its Fd closes it
            return;
        }
    }
    void finish() { lines_.finish(on_line_); }

  private:
    int fd_;
    OnLine on_line_;
    LineSplitter lines_;
};

}  // namespace

Result<SrunOutcome> run_srun(const SrunCall& call, SignalCatcher& signals) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return sys_error("slurm-ddp run: pipe");
    Fd err_read(fds[0]);
    Fd err_write(fds[1]);
    fds[0] = fds[1] = -1;
    if (call.tasks_stderr_apart && ::pipe2(fds, O_CLOEXEC) != 0) {
        return sys_error("slurm-ddp run: pipe");
    }
    Fd task_read(fds[0]);
    Fd task_write(fds[1]);
    std::vector<std::string> args = call.argv;
    if (call.tasks_stderr_apart) {
        // The child keeps this descriptor open across exec, so the name stands for the pipe.
        args.insert(args.begin() + 1, "--error=/dev/fd/" + std::to_string(task_write.get()));
    }
    std::vector<std::string> envs = child_environment(call.set, call.unset);
    std::vector<char*> c_args = c_strings(args);
    std::vector<char*> c_env = c_strings(envs);

    const auto started = Clock::now();
    const pid_t pid = ::fork();
    if (pid < 0) return sys_error("slurm-ddp run: fork");
    if (pid == 0) {
        // srun starts with the dispositions a fresh process has; until exec, a signal must not
        // reach our handler, whose pipe the parent reads.
        for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGPIPE}) {
            (void)::signal(sig, SIG_DFL);
        }
        if (::dup2(err_write.get(), STDERR_FILENO) < 0) ::_exit(127);
        if (task_write.get() >= 0 && ::fcntl(task_write.get(), F_SETFD, 0) != 0) ::_exit(127);
        ::execvpe(c_args[0], c_args.data(), c_env.data());
        const std::string msg = "slurm-ddp run: error: cannot start " + call.argv[0] + ": " +
                                std::strerror(errno) + " (is Slurm's srun on PATH?)\n";
        write_all(STDERR_FILENO, msg.data(), msg.size());
        ::_exit(127);
    }
    err_write.reset();
    task_write.reset();

    SrunOutcome out;
    FirstFailureWatch watch;
    Stream srun_stream(err_read.get(), [&watch, &call](std::string_view line) {
        if (call.tasks_stderr_apart) {
            watch.feed_srun_line(line);
        } else {
            watch.feed_line(line);
        }
    });
    Stream task_stream(task_read.get(),
                       [&watch](std::string_view line) { watch.feed_task_line(line); });
    bool exited = false;
    bool killed = false;
    int wait_status = 0;
    Clock::time_point stop_deadline{};
    Clock::time_point drain_deadline{};
    std::vector<char> buf(std::size_t{64} * 1024);

    while (srun_stream.open() || task_stream.open() || !exited) {
        // While a signal waits for srun to be able to take it, look again soon.
        const bool waiting = !exited && out.stopped_by == 0 && !signals.held().empty();
        pollfd p[3] = {{srun_stream.fd(), POLLIN, 0},
                       {task_stream.fd(), POLLIN, 0},
                       {signals.read_fd(), POLLIN, 0}};
        if (::poll(p, 3, waiting ? 10 : 200) < 0 && errno != EINTR) {
            return sys_error("slurm-ddp run: poll");
        }
        srun_stream.pass_on(p[0].revents, buf, out.stderr_mid_line);
        task_stream.pass_on(p[1].revents, buf, out.stderr_mid_line);
        if ((p[2].revents & POLLIN) != 0) signals.collect();
        const auto now = Clock::now();
        if (!exited) {
            const pid_t r = ::waitpid(pid, &wait_status, WNOHANG);
            if (r == pid) {
                exited = true;
                drain_deadline = now + kDrainLimit;
            } else if (r < 0 && errno != EINTR) {
                return sys_error("slurm-ddp run: waitpid");
            }
        }
        if (!exited && out.stopped_by == 0 && signals.stop() != 0) {
            out.stopped_by = signals.stop();
            ::kill(pid, SIGTERM);  // srun cancels the step
            stop_deadline = now + kStopGrace;
        }
        if (!exited && out.stopped_by == 0 && now - started >= kLaunchSettle) {
            const std::vector<int> held = signals.held();
            for (int sig : held) {
                if (process_takes_signal(pid, sig) && ::kill(pid, sig) == 0) signals.passed_on(sig);
            }
        }
        if (out.stopped_by != 0 && !exited && !killed && now > stop_deadline) {
            ::kill(pid, SIGKILL);
            killed = true;
        }
        if (exited && (srun_stream.open() || task_stream.open()) && now > drain_deadline) break;
    }
    srun_stream.finish();
    task_stream.finish();
    out.status = shell_status(wait_status);
    out.failure = watch.first();
    return out;
}

}  // namespace sddp::run
