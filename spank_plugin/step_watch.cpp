// SPDX-License-Identifier: Apache-2.0
#include "step_watch.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/base/numbers.hpp"
#include "core/task/task_failure.hpp"
#include "plugin_log.hpp"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434  // the same number on every architecture (Linux 5.3)
#endif
#ifndef SYS_close_range
#define SYS_close_range 436  // Linux 5.9
#endif

namespace sddp::plugin {
namespace {

using Clock = std::chrono::steady_clock;

// One byte per message, both ways.
constexpr unsigned char kHello = 0;       // watcher -> slurmstepd: started (its pid in the creds)
constexpr unsigned char kRestEnded = 64;  // slurmstepd -> watcher: the other local tasks ended
// Bytes 1..63 from the watcher: the signal it got.
constexpr int kMaxStrangeMessages = 64;  // then the watcher is no longer listened to

constexpr int kWatchedSignals[] = {SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2};

struct WatchState {
    // Set in init_post_opt, before any task is forked, and only read afterwards (tasks read them
    // from their copy of this memory without taking the mutex).
    int to_watcher = -1;   // slurmstepd's end of the socket pair
    int watcher_end = -1;  // the watcher's end; slurmstepd closes its copy after the hello
    int wake = -1;         // eventfd: stop, or a new pending action
    pid_t stepd = 0;
    uid_t job_uid = 0;
    std::uint32_t local_tasks = 0;
    bool running = false;
    std::thread thread;

    std::atomic<int> first_signal{0};
    std::atomic<bool> checkpoint{false};
    std::atomic<bool> watcher_ended{false};  // its end of the socket closed
    std::atomic<bool> released{false};       // we told it to go (or that the others ended)
    std::atomic<pid_t> watcher_pid{0};
    std::atomic<bool> stopping{false};

    // Everything below under `mu`. Hooks take it from slurmstepd's main thread or, under
    // contain_spank, from a clone that shares this memory.
    std::mutex mu;
    std::vector<char> ended;  // per local task id
    std::uint32_t ended_count = 0;
    bool hello_seen = false;
    bool notes_closed = false;  // stopped reading the watcher
    int strange = 0;
    std::function<void()> pending;
    Clock::time_point due{};
};

WatchState& w() {
    static WatchState s;
    return s;
}

void wake_thread() {
    const std::uint64_t one = 1;
    if (w().wake >= 0) (void)!::write(w().wake, &one, sizeof one);
}

void send_byte(int fd, unsigned char byte) {
    (void)!::send(fd, &byte, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
}

std::optional<std::string> read_proc_file(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return std::nullopt;
    std::string text(4096, '\0');
    std::size_t used = 0;
    while (used < text.size()) {
        const ssize_t n = ::read(fd, text.data() + used, text.size() - used);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        used += static_cast<std::size_t>(n);
    }
    ::close(fd);
    text.resize(used);
    return text;
}

// Whether `pid` is a child of this slurmstepd: only the tasks and the watcher are.
bool is_child_of_stepd(pid_t pid) {
    const auto stat = read_proc_file("/proc/" + std::to_string(pid) + "/stat");
    if (!stat) return false;
    const auto close = stat->rfind(')');  // the command name may hold spaces and parentheses
    if (close == std::string::npos || close + 4 >= stat->size()) return false;
    const std::string_view rest = std::string_view(*stat).substr(close + 4);  // ") S ppid"
    const auto ppid = parse_decimal(rest.substr(0, rest.find(' ')), 1u << 30);
    return ppid && static_cast<pid_t>(*ppid) == w().stepd;
}

// The "rest ended" note goes out once the watcher said hello and every local task but task 0
// ended: then the watcher leaves as soon as task 0's own process is gone.
void maybe_release_locked(WatchState& s) {
    if (s.released || !s.hello_seen || s.notes_closed) return;
    const bool all = s.ended_count >= s.local_tasks;
    const bool rest = s.ended_count + 1 >= s.local_tasks && !s.ended.empty() && s.ended[0] == 0;
    if (all) {
        (void)::shutdown(s.to_watcher, SHUT_WR);
        s.released = true;
    } else if (rest) {
        send_byte(s.to_watcher, kRestEnded);
        s.released = true;
    }
}

void on_hello_locked(WatchState& s, const ucred* creds) {
    if (s.hello_seen || creds == nullptr) return;
    // The kernel vouches for the pid: the watcher is the job's user's child of this slurmstepd.
    if (creds->uid != s.job_uid || !is_child_of_stepd(creds->pid)) {
        log_verbose("step watch: ignoring a hello from pid " + std::to_string(creds->pid) +
                    " (uid " + std::to_string(creds->uid) + "): not the step's watcher");
        return;
    }
    s.hello_seen = true;
    s.watcher_pid = creds->pid;
    // From now on only the watcher holds its end: when it dies, this end reads end-of-file.
    if (s.watcher_end >= 0) {
        ::close(s.watcher_end);
        s.watcher_end = -1;
    }
    maybe_release_locked(s);
}

void on_note_locked(WatchState& s, unsigned char byte, const ucred* creds) {
    if (byte == kHello) {
        on_hello_locked(s, creds);
    } else if (byte < kRestEnded && is_step_wide_signal(byte)) {
        int none = 0;
        s.first_signal.compare_exchange_strong(none, byte);
        if (byte == SIGUSR1 || byte == SIGUSR2) s.checkpoint = true;
    } else if (++s.strange > kMaxStrangeMessages) {
        log_verbose("step watch: the watcher sends what it should not; no longer listening");
        s.notes_closed = true;
    }
}

// Reads every note waiting on the socket. Called by the thread, and by hooks that must not
// miss a note already sent.
void drain_notes_locked(WatchState& s) {
    while (!s.notes_closed && s.to_watcher >= 0) {
        unsigned char buf[16];
        alignas(cmsghdr) char control[CMSG_SPACE(sizeof(ucred))];
        iovec iov{buf, sizeof buf};
        msghdr msg{};
        msg.msg_iov = &iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control;
        msg.msg_controllen = sizeof control;
        const ssize_t n = ::recvmsg(s.to_watcher, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return;  // EAGAIN: nothing more
        if (n == 0) {
            s.watcher_ended = true;
            s.notes_closed = true;
            return;
        }
        const ucred* creds = nullptr;
        for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
            if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS)
                creds = reinterpret_cast<const ucred*>(CMSG_DATA(c));
        }
        for (ssize_t i = 0; i < n; ++i) on_note_locked(s, buf[i], creds);
    }
}

void thread_main() noexcept {
    auto& s = w();
    try {
        while (true) {
            int timeout_ms = -1;
            std::function<void()> run;
            bool listen = false;
            {
                const std::lock_guard lock(s.mu);
                drain_notes_locked(s);
                listen = !s.notes_closed;
                if (s.pending) {
                    const auto now = Clock::now();
                    if (now >= s.due) {
                        run = std::move(s.pending);
                        s.pending = nullptr;
                    } else {
                        timeout_ms = static_cast<int>(
                            std::chrono::ceil<std::chrono::milliseconds>(s.due - now).count());
                    }
                }
            }
            if (run) {
                run();
                continue;
            }
            if (s.stopping && timeout_ms < 0) return;  // a pending action still waits its turn
            pollfd fds[2] = {{s.wake, POLLIN, 0}, {listen ? s.to_watcher : -1, POLLIN, 0}};
            if (::poll(fds, 2, timeout_ms) < 0 && errno != EINTR) return;
            if ((fds[0].revents & POLLIN) != 0) {
                std::uint64_t count = 0;
                (void)!::read(s.wake, &count, sizeof count);
            }
        }
    } catch (...) {
        try {
            log_error("step watch: stopped early (out of memory?)");
        } catch (...) {
        }
    }
}

// In the watcher: only async-signal-safe calls (it was cloned from a task that was forked from
// a threaded slurmstepd), and nothing allocated.
[[noreturn]] void watcher_main(int sock, int task0, pid_t stepd) {
    sigset_t wanted;
    sigemptyset(&wanted);
    for (const int sig : kWatchedSignals) sigaddset(&wanted, sig);
    sigprocmask(SIG_BLOCK, &wanted, nullptr);
    // An ignored signal may be discarded even while blocked (a launcher's task ignores USR1).
    for (const int sig : kWatchedSignals) (void)signal(sig, SIG_DFL);
    prctl(PR_SET_NAME, "slurm-ddp-watch", 0, 0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != stepd) _exit(0);
    // Hold none of the task's descriptors (sockets, pipes, the other end) behind its back.
    const int null_fd = open("/dev/null", O_RDWR);
    if (null_fd >= 0) {
        dup2(null_fd, 0);
        dup2(null_fd, 1);
        dup2(null_fd, 2);
    }
    // Out of the way first, so that moving one to 3 or 4 cannot close the other.
    const int high_sock = fcntl(sock, F_DUPFD, 10);
    const int high_task0 = task0 >= 0 ? fcntl(task0, F_DUPFD, 10) : -1;
    if (high_sock < 0 || dup2(high_sock, 3) != 3) _exit(1);
    sock = 3;
    task0 = high_task0 >= 0 && dup2(high_task0, 4) == 4 ? 4 : -1;
    if (syscall(SYS_close_range, 5u, ~0u, 0u) != 0) {
        for (int fd = 5; fd < 65536; ++fd) close(fd);
    }
    const int sfd = signalfd(-1, &wanted, SFD_CLOEXEC);
    if (sfd < 0) _exit(1);
    send_byte(sock, kHello);

    bool rest_ended = false;
    bool task0_done = false;
    while (true) {
        pollfd fds[3] = {{sfd, POLLIN, 0}, {sock, POLLIN, 0}, {task0, POLLIN, 0}};
        if (poll(fds, 3, -1) < 0) {
            if (errno == EINTR) continue;
            _exit(1);
        }
        if ((fds[0].revents & POLLIN) != 0) {
            signalfd_siginfo info[8];
            const ssize_t n = read(sfd, info, sizeof info);
            for (ssize_t i = 0; n > 0 && i < n / static_cast<ssize_t>(sizeof info[0]); ++i)
                send_byte(sock, static_cast<unsigned char>(info[i].ssi_signo));
        }
        if ((fds[1].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
            unsigned char buf[16];
            const ssize_t n = recv(sock, buf, sizeof buf, MSG_DONTWAIT);
            if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) _exit(0);
            for (ssize_t i = 0; i < n; ++i) rest_ended = rest_ended || buf[i] == kRestEnded;
        }
        if ((fds[2].revents & (POLLIN | POLLHUP)) != 0) {
            task0_done = true;
            close(task0);
            task0 = -1;
        }
        if (rest_ended && task0_done) _exit(0);
    }
}

}  // namespace

bool start_step_watch(std::uint32_t local_tasks, uid_t job_uid) {
    auto& s = w();
    if (s.running) return true;
    int pair[2] = {-1, -1};
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) {
        log_error("step watch: socketpair failed: signals to the step go unseen on this node");
        return false;
    }
    const int on = 1;
    s.wake = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (s.wake < 0 || ::setsockopt(pair[0], SOL_SOCKET, SO_PASSCRED, &on, sizeof on) != 0 ||
        ::fcntl(pair[0], F_SETFL, O_NONBLOCK) != 0) {
        log_error("step watch: cannot set up its socket: signals to the step go unseen");
        ::close(pair[0]);
        ::close(pair[1]);
        if (s.wake >= 0) ::close(s.wake);
        s.wake = -1;
        return false;
    }
    s.to_watcher = pair[0];
    s.watcher_end = pair[1];
    s.stepd = ::getpid();
    s.job_uid = job_uid;
    s.local_tasks = local_tasks;
    s.ended.assign(std::min<std::uint32_t>(local_tasks, 1u << 16), 0);
    try {
        s.thread = std::thread(thread_main);
    } catch (...) {
        log_error("step watch: cannot start its thread: signals to the step go unseen");
        ::close(pair[0]);
        ::close(pair[1]);
        ::close(s.wake);
        s.to_watcher = s.watcher_end = s.wake = -1;
        return false;
    }
    s.running = true;
    return true;
}

bool step_watch_running() {
    return w().running;
}

void start_watcher() {
    auto& s = w();
    if (!s.running || s.watcher_end < 0) return;
    const pid_t stepd = getppid();
    // Task 0's own process, for the watcher to see it end (a pidfd closes on exec here).
    const int task0 = static_cast<int>(syscall(SYS_pidfd_open, getpid(), 0u));
    const long pid = syscall(SYS_clone, CLONE_PARENT | SIGCHLD, nullptr, nullptr, nullptr, 0);
    if (pid == 0) watcher_main(s.watcher_end, task0, stepd);
    if (task0 >= 0) close(task0);
    if (pid < 0) log_verbose("step watch: cannot start the signal watcher: clone failed");
}

int step_signal() {
    auto& s = w();
    if (!s.running) return 0;
    {
        const std::lock_guard lock(s.mu);
        drain_notes_locked(s);
    }
    if (const int sig = s.first_signal.load(); sig != 0) return sig;
    // Sent to the watcher but not read by it yet: still the step's signal.
    const pid_t pid = s.watcher_pid.load();
    if (pid <= 0 || s.watcher_ended) return 0;
    const auto status = read_proc_file("/proc/" + std::to_string(pid) + "/status");
    if (!status) return 0;
    const int sig = first_step_wide_signal(pending_signal_mask(*status).value_or(0));
    if (sig == SIGUSR1 || sig == SIGUSR2) s.checkpoint = true;
    return sig;
}

int step_signal_within(std::chrono::milliseconds grace) {
    auto& s = w();
    const auto until = Clock::now() + grace;
    for (;;) {
        if (const int sig = step_signal(); sig != 0 || !s.running) return sig;
        {
            const std::lock_guard lock(s.mu);
            if (s.notes_closed) return 0;  // no watcher left to report anything
        }
        const auto left = until - Clock::now();
        if (left <= Clock::duration::zero()) return 0;
        // Short slices: the watch thread may take the note off the socket before this poll
        // sees it, and then only first_signal says so.
        pollfd p{s.to_watcher, POLLIN, 0};
        const auto slice = std::min<Clock::duration>(left, std::chrono::milliseconds(5));
        (void)::poll(&p, 1,
                     static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(slice).count()));
    }
}

bool checkpoint_signalled() {
    (void)step_signal();
    return w().checkpoint.load();
}

bool watcher_gone() {
    auto& s = w();
    if (!s.running) return false;
    {
        const std::lock_guard lock(s.mu);
        drain_notes_locked(s);
    }
    return s.watcher_ended && !s.released;
}

void note_task_end(std::uint32_t local_id) {
    auto& s = w();
    if (!s.running) return;
    const std::lock_guard lock(s.mu);
    if (local_id < s.ended.size() && s.ended[local_id] == 0) {
        s.ended[local_id] = 1;
        ++s.ended_count;
    }
    maybe_release_locked(s);
}

bool run_later(std::chrono::milliseconds delay, std::function<void()> action) {
    auto& s = w();
    if (!s.running) return false;
    {
        const std::lock_guard lock(s.mu);
        if (s.pending) return false;
        s.pending = std::move(action);
        s.due = Clock::now() + delay;
    }
    wake_thread();
    return true;
}

void stop_step_watch() {
    auto& s = w();
    if (!s.running) return;
    s.stopping = true;
    wake_thread();
    if (s.thread.joinable()) s.thread.join();
    for (int* fd : {&s.to_watcher, &s.watcher_end, &s.wake}) {
        if (*fd >= 0) ::close(*fd);
        *fd = -1;
    }
    s.running = false;
}

}  // namespace sddp::plugin
