// SPDX-License-Identifier: Apache-2.0
// A child process with a deadline: what `slurm-ddp stacks` runs (scontrol, srun, py-spy, gdb,
// eu-stack) may hang on a stuck controller or a process in uninterruptible sleep.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace sddp::stacks {

struct ChildResult {
    bool started = false;  // false: not found / not executable (`error` says why)
    bool timed_out = false;
    bool unreaped = false;  // still there 1 s after SIGKILL (in D): left behind, not waited for
    int exit_status = -1;   // the exit code; -1 when killed by a signal or at the deadline
    std::string out;        // stdout (at most 8 MiB kept)
    std::string err;        // stderr (at most 1 MiB kept)
    std::string error;
};

// Runs argv[0] (looked up on PATH when it has no '/') in a process group of its own, with
// `env` as its environment (empty: ours). At `budget` the group gets SIGTERM, then SIGKILL
// 2 s later, so an attached debugger detaches when it can and never outlives the bound. A
// child that SIGKILL does not end within 1 s (stuck in uninterruptible sleep on a process it
// reads) is left behind: the caller's report must not wait for the kernel.
// `enough`, when given, is asked after each read of stdout: once it says the output is complete,
// the child gets 2 s to end by itself before it is stopped as at the budget.
ChildResult run_bounded(const std::vector<std::string>& argv, std::chrono::milliseconds budget,
                        const std::vector<std::string>& env = {},
                        const std::function<bool(std::string_view)>& enough = {});

// The last line of a child's output that is not blank: what a tool said last (its error), for
// one-line messages.
std::string last_line(const std::string& text);

}  // namespace sddp::stacks
