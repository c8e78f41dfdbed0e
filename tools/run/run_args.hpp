// SPDX-License-Identifier: Apache-2.0
// The arguments of `slurm-ddp run --restarts=N [srun options] -- program ...`.
//
// The srun options pass through unchanged, except the few the command must own to choose the
// nodes of each run: the node count (-N), the nodes to leave out (-x), and the options that pin
// nodes by name or position (-w, -F, -r), which would defeat leaving a failed node out and are
// refused. Short options given in a bundle ("-lN2") are not looked into.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/result.hpp"

namespace sddp::run {

// The most restarts one command may make. Each restart leaves a node out, so an allocation runs
// out of spare nodes long before; the cap catches a typo such as --restarts=1000.
inline constexpr std::uint32_t kMaxRestarts = 100;

// srun's -N MIN[-MAX]: a run takes as many usable nodes as it can, up to max, at least min.
struct NodeRange {
    std::uint32_t min = 0;
    std::uint32_t max = 0;
};

struct RunRequest {
    std::uint32_t restarts = 0;
    NodeRange nodes;
    std::string nodes_text;                 // as given ("2", "2-3"), for messages
    std::vector<std::string> excluded;      // -x, expanded
    std::string excluded_text;              // -x as given
    std::vector<std::string> srun_options;  // passed to srun as they are
    bool has_ddp = false;                   // the user gave --ddp[=...] among them
    bool has_kill_on_bad_exit = false;      // the user gave -K/--kill-on-bad-exit among them
    bool has_ntasks = false;                // the user gave -n/--ntasks among them
    // The user chose where the tasks' stderr goes (-e/--error, or -o/--output, which takes
    // stderr too without -e) or gave them a terminal (--pty): srun's stderr is then left as it is.
    bool has_own_stderr = false;
    bool help = false;                 // -h/--help before "--"
    std::vector<std::string> program;  // everything after "--"
};

// "2" or "2-3". The error names the option and the value.
Result<NodeRange> parse_node_range(std::string_view text);

// The whole argument list after `run`. Errors name the option, the value and the fix.
Result<RunRequest> parse_run_args(const std::vector<std::string>& args);

}  // namespace sddp::run
