// SPDX-License-Identifier: Apache-2.0
// `slurm-ddp stacks --local`: the /proc files read first, because they never wait on the process
// (stat, wchan, the kernel stack), and the entry of a process that a thread in uninterruptible
// sleep (D) makes unreadable for every tool. Pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "stacks/stacks_targets.hpp"

namespace sddp::stacks {

struct StatFields {
    std::string comm;
    char state = '?';
    int ppid = 0;
};

// "pid (comm) S ppid ...": comm may hold spaces and parentheses, so it ends at the last ')'.
std::optional<StatFields> parse_proc_stat(std::string_view text);

// /proc/PID/stack ("[<0>] do_wait+0x1b0/0x2f0") as function names, innermost first.
std::vector<std::string> kernel_frames(std::string_view proc_stack);

// What the report shows for a process with a thread in D: tool "kernel", the kernel stack (or
// the wchan alone where /proc/PID/stack needs root) as frames, so that ranks blocked in the
// same kernel function group together, and a note saying why no tool read it.
struct BlockedEntry {
    std::string tool;
    std::string note;
    std::vector<std::string> frames;
};
BlockedEntry blocked_entry(const ProcessFacts& p);

}  // namespace sddp::stacks
