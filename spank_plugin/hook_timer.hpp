// SPDX-License-Identifier: Apache-2.0
// The plugin's own time, measured from inside its hooks.
//
// A HookTimer adds the wall time (CLOCK_MONOTONIC) and the CPU time of the calling thread
// (CLOCK_THREAD_CPUTIME_ID) between its construction and stop()/destruction to a HookTime. It
// never throws, allocates or logs, so it can wrap any hook without changing what the hook does;
// the cost is four clock_gettime calls (well under a microsecond).
#pragma once

#include <time.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>

namespace sddp::plugin {

struct HookTime {
    std::int64_t wall_ns = 0;
    std::int64_t cpu_ns = 0;
};

// What one process spent in each hook. The option callback runs twice in slurmstepd: summed.
struct HookTimes {
    HookTime init;
    HookTime option;
    HookTime post_opt;
    HookTime user_init;
    HookTime task_init;
};

class HookTimer {
  public:
    explicit HookTimer(HookTime& into) noexcept
        : into_(&into), wall0_(now(CLOCK_MONOTONIC)), cpu0_(now(CLOCK_THREAD_CPUTIME_ID)) {}
    ~HookTimer() { stop(); }
    HookTimer(const HookTimer&) = delete;
    HookTimer& operator=(const HookTimer&) = delete;

    // Stop early (before logging what was measured); later calls do nothing. The wall interval
    // encloses the CPU one (read first at the start, last at the end), so cpu <= wall holds
    // even where reading a clock is slow (valgrind).
    void stop() noexcept {
        if (into_ == nullptr) return;
        const std::int64_t cpu1 = now(CLOCK_THREAD_CPUTIME_ID);
        into_->wall_ns += now(CLOCK_MONOTONIC) - wall0_;
        into_->cpu_ns += cpu1 - cpu0_;
        into_ = nullptr;
    }

  private:
    static std::int64_t now(clockid_t clock) noexcept {
        timespec ts{};
        if (::clock_gettime(clock, &ts) != 0) return 0;
        return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
    }

    HookTime* into_;
    std::int64_t wall0_;
    std::int64_t cpu0_;
};

// "init 12 us, option 4 us, task_init 87 us (total 103 us, cpu 95 us)": whole microseconds,
// rounded down; total is the sum of the printed values, cpu the sum of the hooks' CPU times.
// bench/overhead/plugin_overhead.sh and tests/plugin_host parse this format.
std::string format_hook_times(std::initializer_list<std::pair<const char*, HookTime>> hooks);

// One line per --ddp task (slurmstepd) and per --ddp srun: what the plugin itself cost. Level
// verbose, not info: production clusters run SlurmdDebug=info, and a line for every task of every
// step there is noise nobody asked for; verbose is the first level admins raise to diagnose
// (SlurmdDebug=verbose puts the task lines in the slurmd log, `srun -v` shows srun's line, root
// can add `srun --slurmd-debug=verbose` to see the task lines on the step's stderr). The per-task
// details (rank, MASTER_ADDR, binding) are one level further down, at debug.
void log_plugin_time(const std::string& who, const std::string& times);

}  // namespace sddp::plugin
