// SPDX-License-Identifier: Apache-2.0
#include "stacks/stacks_proc.hpp"

#include <sstream>

namespace sddp::stacks {

std::optional<StatFields> parse_proc_stat(std::string_view text) {
    const auto open = text.find('(');
    const auto close = text.rfind(')');
    if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
        return std::nullopt;
    }
    StatFields f;
    f.comm = std::string(text.substr(open + 1, close - open - 1));
    std::istringstream rest{std::string(text.substr(close + 1))};
    std::string state;
    if (!(rest >> state >> f.ppid) || state.size() != 1) return std::nullopt;
    f.state = state[0];
    return f;
}

std::vector<std::string> kernel_frames(std::string_view proc_stack) {
    std::vector<std::string> out;
    while (!proc_stack.empty()) {
        const auto nl = proc_stack.find('\n');
        std::string_view line = proc_stack.substr(0, nl);
        proc_stack.remove_prefix(nl == std::string_view::npos ? proc_stack.size() : nl + 1);
        // "[<0>] " (the address, hidden to most readers), then "name+0xoff/0xlen".
        if (const auto bracket = line.find("] "); bracket != std::string_view::npos) {
            line.remove_prefix(bracket + 2);
        }
        line = line.substr(0, line.find('+'));
        while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.remove_suffix(1);
        if (!line.empty()) out.emplace_back(line);
    }
    return out;
}

BlockedEntry blocked_entry(const ProcessFacts& p) {
    BlockedEntry e;
    e.tool = "kernel";
    const BlockedThread b = p.blocked.value_or(BlockedThread{});
    const std::string where = b.wchan.empty() ? std::string("the kernel") : b.wchan;
    const auto frames = kernel_frames(b.kernel_stack);
    e.note = "in uninterruptible sleep (D) in " + where +
             ": no tool can attach until that kernel call returns (a hung file system or "
             "device is the usual cause)";
    if (frames.empty()) {
        e.note += "; its kernel stack (/proc/" + std::to_string(p.pid) + "/task/" +
                  std::to_string(b.tid) + "/stack) is readable by root only";
    }
    e.frames.push_back("thread \"" + p.comm + "\" in uninterruptible sleep (D)");
    if (frames.empty()) {
        e.frames.push_back("    " + where + " [kernel]");
    } else {
        for (const auto& f : frames) e.frames.push_back("    " + f + " [kernel]");
    }
    return e;
}

}  // namespace sddp::stacks
