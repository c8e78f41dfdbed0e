// SPDX-License-Identifier: Apache-2.0
#include "rendezvous/tcp/fd_limit.hpp"

#include <dirent.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstdint>
#include <utility>

namespace sddp {
namespace {

constexpr std::uint64_t kUnlimited = 1u << 20;  // what RLIM_INFINITY counts as

std::uint64_t as_count(rlim_t v) {
    return v == RLIM_INFINITY ? kUnlimited : static_cast<std::uint64_t>(v);
}

// Highest open descriptor + 1 (new descriptors take the lowest free numbers, but the limit
// bounds the numbers, so the highest one is what matters for restoring).
std::uint64_t open_descriptor_span() {
    DIR* d = ::opendir("/proc/self/fd");
    if (d == nullptr) return 1024;  // unknown: assume the common default is in use
    std::uint64_t top = 0;
    while (const dirent* e = ::readdir(d)) {
        std::uint64_t v = 0;
        bool digits = e->d_name[0] != '\0';
        for (const char* p = e->d_name; *p != '\0'; ++p) {
            if (*p < '0' || *p > '9') {
                digits = false;
                break;
            }
            v = v * 10 + static_cast<std::uint64_t>(*p - '0');
        }
        if (digits) top = std::max(top, v + 1);
    }
    ::closedir(d);
    return top;
}

}  // namespace

std::uint64_t fd_soft_limit_for(std::uint64_t soft, std::uint64_t hard, std::uint64_t open_now,
                                std::uint64_t extra) {
    const std::uint64_t want = std::min(hard, open_now + extra);
    return std::max(soft, want);
}

FdLimitRaise::FdLimitRaise(std::uint64_t extra) {
    rlimit lim{};
    if (::getrlimit(RLIMIT_NOFILE, &lim) != 0) return;
    soft_ = as_count(lim.rlim_cur);
    hard_ = as_count(lim.rlim_max);
    // Nothing to raise: skip reading /proc/self/fd (five system calls on every rank).
    if (lim.rlim_cur == RLIM_INFINITY || lim.rlim_cur >= lim.rlim_max) return;
    const std::uint64_t want = fd_soft_limit_for(soft_, hard_, open_descriptor_span(), extra);
    if (want <= soft_) return;
    rlimit set = lim;
    set.rlim_cur = static_cast<rlim_t>(want);
    if (::setrlimit(RLIMIT_NOFILE, &set) != 0) return;
    old_soft_ = soft_;
    soft_ = want;
}

void FdLimitRaise::restore() {
    if (old_soft_ == 0) return;
    rlimit lim{};
    // Someone else changed it since, or our sockets left descriptors above the old limit (a
    // lower soft limit does not close them, but confuses code that loops up to it): leave it.
    if (::getrlimit(RLIMIT_NOFILE, &lim) == 0 && as_count(lim.rlim_cur) == soft_ &&
        open_descriptor_span() <= old_soft_) {
        lim.rlim_cur = static_cast<rlim_t>(old_soft_);
        ::setrlimit(RLIMIT_NOFILE, &lim);
    }
    old_soft_ = 0;
}

FdLimitRaise::~FdLimitRaise() {
    restore();
}

FdLimitRaise::FdLimitRaise(FdLimitRaise&& other) noexcept
    : soft_(other.soft_), hard_(other.hard_), old_soft_(std::exchange(other.old_soft_, 0)) {}

FdLimitRaise& FdLimitRaise::operator=(FdLimitRaise&& other) noexcept {
    if (this != &other) {
        restore();
        soft_ = other.soft_;
        hard_ = other.hard_;
        old_soft_ = std::exchange(other.old_soft_, 0);
    }
    return *this;
}

}  // namespace sddp
