// SPDX-License-Identifier: Apache-2.0
#include "run_srun.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <set>

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

int g_signal_write_fd = -1;  // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)

void on_signal(int sig) {
    const int saved = errno;
    const auto byte = static_cast<unsigned char>(sig);
    // A full pipe means many signals are pending already: dropping this one loses nothing.
    [[maybe_unused]] const auto n = ::write(g_signal_write_fd, &byte, 1);
    errno = saved;
}

constexpr int kCaught[] = {SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2};

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

}  // namespace

Result<std::unique_ptr<SignalCatcher>> SignalCatcher::install() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) return sys_error("slurm-ddp run: pipe");
    std::unique_ptr<SignalCatcher> c(new SignalCatcher());
    c->read_fd_ = fds[0];
    c->write_fd_ = fds[1];
    g_signal_write_fd = fds[1];
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    for (int sig : kCaught) {
        struct sigaction old {};
        if (::sigaction(sig, &sa, &old) != 0) return sys_error("slurm-ddp run: sigaction");
        c->saved_.emplace_back(sig, old);
    }
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    struct sigaction old {};
    if (::sigaction(SIGPIPE, &ignore, &old) != 0) return sys_error("slurm-ddp run: sigaction");
    c->saved_.emplace_back(SIGPIPE, old);
    return c;
}

SignalCatcher::~SignalCatcher() {
    for (const auto& [sig, old] : saved_) ::sigaction(sig, &old, nullptr);
    g_signal_write_fd = -1;
    if (read_fd_ >= 0) ::close(read_fd_);
    if (write_fd_ >= 0) ::close(write_fd_);
}

int SignalCatcher::take_pending_stop() const {
    unsigned char sigs[64];
    int stop = 0;
    for (;;) {
        const ssize_t n = ::read(read_fd_, sigs, sizeof sigs);
        if (n <= 0) break;
        for (ssize_t i = 0; i < n; ++i) {
            if (stop == 0 && sigs[i] != SIGUSR1 && sigs[i] != SIGUSR2) stop = sigs[i];
        }
    }
    return stop;
}

Result<SrunOutcome> run_srun(const std::vector<std::string>& argv,
                             const std::vector<std::string>& set,
                             const std::vector<std::string>& unset, const SignalCatcher& signals) {
    std::vector<std::string> args = argv;
    std::vector<std::string> envs = child_environment(set, unset);
    std::vector<char*> c_args = c_strings(args);
    std::vector<char*> c_env = c_strings(envs);

    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return sys_error("slurm-ddp run: pipe");
    Fd err_read(fds[0]);
    Fd err_write(fds[1]);
    const pid_t pid = ::fork();
    if (pid < 0) return sys_error("slurm-ddp run: fork");
    if (pid == 0) {
        // srun starts with the dispositions a fresh process has; until exec, a signal must not
        // reach our handler, whose pipe the parent reads.
        for (int sig : kCaught) (void)::signal(sig, SIG_DFL);
        (void)::signal(SIGPIPE, SIG_DFL);
        if (::dup2(err_write.get(), STDERR_FILENO) < 0) ::_exit(127);
        ::execvpe(c_args[0], c_args.data(), c_env.data());
        const std::string msg = "slurm-ddp run: error: cannot start " + argv[0] + ": " +
                                std::strerror(errno) + " (is Slurm's srun on PATH?)\n";
        write_all(STDERR_FILENO, msg.data(), msg.size());
        ::_exit(127);
    }
    err_write.reset();
    ::fcntl(err_read.get(), F_SETFL, ::fcntl(err_read.get(), F_GETFL) | O_NONBLOCK);

    SrunOutcome out;
    FirstFailureWatch watch;
    LineSplitter lines;
    const auto on_line = [&watch](std::string_view line) { watch.feed_line(line); };
    bool pipe_open = true;
    bool exited = false;
    bool killed = false;
    int wait_status = 0;
    Clock::time_point stop_deadline{};
    Clock::time_point drain_deadline{};
    std::vector<char> buf(std::size_t{64} * 1024);

    while (pipe_open || !exited) {
        pollfd p[2] = {{pipe_open ? err_read.get() : -1, POLLIN, 0},
                       {signals.read_fd(), POLLIN, 0}};
        if (::poll(p, 2, 200) < 0 && errno != EINTR) return sys_error("slurm-ddp run: poll");
        if (pipe_open && (p[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
            for (;;) {
                const ssize_t n = ::read(err_read.get(), buf.data(), buf.size());
                if (n > 0) {
                    write_all(STDERR_FILENO, buf.data(), static_cast<std::size_t>(n));
                    out.stderr_mid_line = buf[static_cast<std::size_t>(n) - 1] != '\n';
                    lines.feed(std::string_view(buf.data(), static_cast<std::size_t>(n)), on_line);
                    continue;
                }
                if (n < 0 && errno == EINTR) continue;
                if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) pipe_open = false;
                break;
            }
        }
        if ((p[1].revents & POLLIN) != 0) {
            unsigned char sigs[64];
            const ssize_t n = ::read(signals.read_fd(), sigs, sizeof sigs);
            for (ssize_t i = 0; i < n; ++i) {
                const int sig = sigs[i];
                if (exited) continue;
                if (sig == SIGUSR1 || sig == SIGUSR2) {
                    ::kill(pid, sig);
                } else if (out.stopped_by == 0) {
                    out.stopped_by = sig;
                    ::kill(pid, SIGTERM);  // srun cancels the step
                    stop_deadline = Clock::now() + kStopGrace;
                }
            }
        }
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
        if (out.stopped_by != 0 && !exited && !killed && now > stop_deadline) {
            ::kill(pid, SIGKILL);
            killed = true;
        }
        if (exited && pipe_open && now > drain_deadline) break;
    }
    lines.finish(on_line);
    out.status = shell_status(wait_status);
    out.failure = watch.first();
    return out;
}

}  // namespace sddp::run
