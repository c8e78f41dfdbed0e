// SPDX-License-Identifier: Apache-2.0
// `slurm-ddp stacks --local`: which processes of a node are the step's ranks, and which tool
// reads each one's stack. Pure: the facts come from /proc (stacks_local.cpp).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/base/result.hpp"

namespace sddp::stacks {

// What /proc says about one process; `env` holds only the variables named in kEnvWanted.
struct ProcessFacts {
    int pid = 0;
    int ppid = 0;
    std::string comm;     // /proc/PID/comm
    std::string argv0;    // first word of /proc/PID/cmdline
    bool python = false;  // a CPython interpreter (its executable or libpython mapped)
    std::map<std::string, std::string> env;
};

// The environment variables select_step_processes and pyspy_candidates look at.
const std::vector<std::string>& wanted_environment();

struct StackTarget {
    int pid = 0;
    std::optional<long> rank;  // RANK, else SLURM_PROCID; nullopt when neither parses
    std::string comm;
    bool python = false;
    const ProcessFacts* facts = nullptr;  // into the vector given to select_step_processes
};

// The processes of step `job`.`step` on node `node` that stand for ranks, in rank order:
// every process whose environment carries the step's SLURM_JOB_ID and SLURM_STEP_ID (and
// SLURMD_NODENAME `node`, as nodes may share a process table), less the wrappers (a shell,
// timeout, env... with a child in the step) and launchers (a process without RANK whose
// children have one, e.g. torchrun), and less the children of a rank's own process (data
// loader workers): for each rank, the topmost process left.
std::vector<StackTarget> select_step_processes(const std::vector<ProcessFacts>& all,
                                               const std::string& job, const std::string& step,
                                               const std::string& node);

// Where a py-spy for a process may be, best first: SLURM_DDP_PYSPY (ours, then the process's),
// beside the interpreter the process was started as (a virtual environment's bin/), the
// process's PATH, our PATH. Paths only; the caller keeps the first executable one.
std::vector<std::string> pyspy_candidates(const std::optional<std::string>& our_pyspy,
                                          const ProcessFacts& target,
                                          const std::optional<std::string>& our_path);

// Executable paths of the tools found on a node ("" when absent).
struct ToolsFound {
    std::string pyspy;
    std::string gdb;
    std::string eu_stack;
};

struct ToolChoice {
    std::string tool;  // "py-spy", "eu-stack" or "gdb"
    std::string path;
    std::string note;  // a warning for the reader (a Python process read without py-spy)
};

// py-spy for a Python process; eu-stack (fast, no symbol load) else gdb for native frames.
// Errc::unsupported, naming what to install, when nothing fits.
Result<ToolChoice> choose_tool(bool python, const ToolsFound& found);

// The command that dumps `pid` with `choice`.
std::vector<std::string> tool_command(const ToolChoice& choice, int pid);

}  // namespace sddp::stacks
