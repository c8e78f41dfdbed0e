// SPDX-License-Identifier: Apache-2.0
// The soft RLIMIT_NOFILE the rendezvous needs, raised for as long as it runs.
//
// The root holds one socket per node leader, a leader one per local rank. Raising the soft limit
// to the hard one for good would change the limit the trainer and everything it forks inherit
// (select(2)-based code breaks above 1024), so it is raised only as far as needed: the
// descriptors open now plus `extra`, capped by the hard limit. The destructor puts the old soft
// limit back, unless something else changed it meanwhile, or descriptors above it are still open.
#pragma once

#include <cstdint>

namespace sddp {

// The soft limit to set: `open_now + extra` when above `soft`, never above `hard`, else `soft`.
std::uint64_t fd_soft_limit_for(std::uint64_t soft, std::uint64_t hard, std::uint64_t open_now,
                                std::uint64_t extra);

class FdLimitRaise {
  public:
    FdLimitRaise() = default;
    explicit FdLimitRaise(std::uint64_t extra);
    ~FdLimitRaise();
    FdLimitRaise(FdLimitRaise&& other) noexcept;
    FdLimitRaise& operator=(FdLimitRaise&& other) noexcept;
    FdLimitRaise(const FdLimitRaise&) = delete;
    FdLimitRaise& operator=(const FdLimitRaise&) = delete;

    std::uint64_t soft() const { return soft_; }  // in force now
    std::uint64_t hard() const { return hard_; }

  private:
    void restore();
    std::uint64_t soft_ = 1024;
    std::uint64_t hard_ = 1024;
    std::uint64_t old_soft_ = 0;  // 0: nothing to restore
};

}  // namespace sddp
