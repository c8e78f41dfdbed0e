// SPDX-License-Identifier: Apache-2.0
#include "run/run_signals.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <string>

namespace sddp::run {
namespace {

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

// The value of "NAME:\t..." in /proc/PID/status, without its leading blanks.
std::string_view status_field(std::string_view status, std::string_view name) {
    for (std::size_t at = 0; at < status.size();) {
        const std::size_t end = std::min(status.find('\n', at), status.size());
        std::string_view line = status.substr(at, end - at);
        at = end + 1;
        if (line.size() <= name.size() || line.substr(0, name.size()) != name ||
            line[name.size()] != ':') {
            continue;
        }
        line.remove_prefix(name.size() + 1);
        while (!line.empty() && (line.front() == ' ' || line.front() == '\t'))
            line.remove_prefix(1);
        return line;
    }
    return {};
}

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

void SignalCatcher::collect() {
    unsigned char sigs[64];
    for (;;) {
        const ssize_t n = ::read(read_fd_, sigs, sizeof sigs);
        if (n <= 0) break;
        for (ssize_t i = 0; i < n; ++i) {
            const int sig = sigs[i];
            if (sig == SIGUSR1 || sig == SIGUSR2) {
                if (std::find(held_.begin(), held_.end(), sig) == held_.end()) held_.push_back(sig);
            } else if (stop_ == 0) {
                stop_ = sig;
            }
        }
    }
}

void SignalCatcher::passed_on(int sig) {
    held_.erase(std::remove(held_.begin(), held_.end(), sig), held_.end());
}

bool status_takes_signal(std::string_view status, int sig) {
    if (sig < 1 || sig > 64) return false;
    const std::string_view state = status_field(status, "State");
    if (state.empty() || state.front() == 'Z' || state.front() == 'X') return false;
    const std::uint64_t bit = std::uint64_t{1} << (sig - 1);
    for (const char* name : {"SigBlk", "SigIgn", "SigCgt"}) {
        const std::string_view hex = status_field(status, name);
        std::uint64_t mask = 0;
        const auto [p, ec] = std::from_chars(hex.data(), hex.data() + hex.size(), mask, 16);
        if (ec == std::errc() && p != hex.data() && (mask & bit) != 0) return true;
    }
    return false;
}

bool process_takes_signal(pid_t pid, int sig) {
    const std::string path = "/proc/" + std::to_string(pid) + "/status";
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    std::string text;
    char buf[4096];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        text.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fd);
    return status_takes_signal(text, sig);
}

}  // namespace sddp::run
