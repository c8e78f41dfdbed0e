// SPDX-License-Identifier: Apache-2.0
// `slurm-ddp stacks --local`: the facts of the step's processes, read from /proc without ever
// waiting on a process that the kernel holds.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "stacks/stacks_slurm.hpp"
#include "stacks/stacks_targets.hpp"

namespace sddp::stacks {

// A small /proc (or other) file, at most `cap` bytes; nullopt when it cannot be opened.
std::optional<std::string> read_small_file(const std::string& path, std::size_t cap = 1u << 20);

// The facts of the processes `listed` (gone ones, zombies, ours and our children left out).
// /proc/PID/stat and every thread's stat come first: they never wait on the process. A process
// with a thread in D (still 0.1 s later) gets its wchan and kernel stack and nothing else: environ,
// cmdline and maps are read under its memory-map lock, which the blocked call may hold. The
// others are read in a thread each; one that has not answered at `deadline` is given up on
// (`read_error`), so that one process cannot hold the node's report.
std::vector<ProcessFacts> read_step_processes(const std::vector<ListedPid>& listed,
                                              std::chrono::steady_clock::time_point deadline);

}  // namespace sddp::stacks
