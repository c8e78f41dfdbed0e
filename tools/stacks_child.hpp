// SPDX-License-Identifier: Apache-2.0
// A child process with a deadline: what `slurm-ddp stacks` runs (scontrol, srun, py-spy, gdb,
// eu-stack) may hang on a stuck controller or a process in uninterruptible sleep.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace sddp::stacks {

struct ChildResult {
    bool started = false;  // false: not found / not executable (`error` says why)
    bool timed_out = false;
    int exit_status = -1;  // the exit code; -1 when killed by a signal or at the deadline
    std::string out;       // stdout (at most 8 MiB kept)
    std::string err;       // stderr (at most 1 MiB kept)
    std::string error;
};

// Runs argv[0] (looked up on PATH when it has no '/') in a process group of its own, with
// `env` as its environment (empty: ours). At `budget` the group gets SIGTERM, then SIGKILL
// 2 s later, so an attached debugger detaches when it can and never outlives the bound.
ChildResult run_bounded(const std::vector<std::string>& argv, std::chrono::milliseconds budget,
                        const std::vector<std::string>& env = {});

// The first executable file among `paths`, or "".
std::string first_executable(const std::vector<std::string>& paths);

// `name` looked up on $PATH (ours), or "".
std::string find_on_path(const std::string& name);

}  // namespace sddp::stacks
