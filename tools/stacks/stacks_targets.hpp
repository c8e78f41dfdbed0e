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

// A thread of the process in uninterruptible sleep (state D): where the kernel holds it.
struct BlockedThread {
    int tid = 0;
    std::string wchan;         // /proc/PID/task/TID/wchan ("" when unreadable or 0)
    std::string kernel_stack;  // /proc/PID/task/TID/stack ("" when unreadable: root only)
};

// What /proc says about one process of the step; `env` holds only the variables named in
// wanted_environment(). Membership is never taken from here: the processes come from
// `scontrol listpids` (what slurmstepd's proctrack plugin counts in the step).
struct ProcessFacts {
    int pid = 0;
    int ppid = 0;
    std::string comm;               // from /proc/PID/stat
    char state = '?';               // from /proc/PID/stat
    std::optional<long> task_rank;  // GLOBALID of listpids: the pid Slurm started as a task
    // Whether environ, cmdline, exe and maps were read: never for a process with a thread in D,
    // whose memory map may be locked by the kernel call it waits in (the read would hang too).
    bool env_known = false;
    std::string argv0;      // first word of /proc/PID/cmdline
    std::string exe;        // /proc/PID/exe
    std::string libpython;  // the libpython it maps, if any
    // Its root directory is ours: it sees this machine's files, but for what is mounted over
    // them in its own mount namespace (a job container's private /tmp and /dev/shm).
    bool host_root = true;
    bool python = false;  // a CPython interpreter (its executable or libpython mapped)
    std::map<std::string, std::string> env;
    std::optional<BlockedThread> blocked;  // a thread in D: no tool is run on the process
    std::string read_error;                // its /proc files did not answer in time
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

// The step's processes on this node (`step_processes`: all of them, from listpids) that stand
// for ranks, in rank order: less what the step daemon started beside the tasks (a SPANK
// plugin's helper: a sibling of the tasks' own processes that is no task itself), less the wrappers
// (a shell, timeout, env... with a child in the step) and launchers (a process without RANK whose
// children have one, e.g. torchrun), and less the children of a rank's own process (data loader
// workers): for each rank, the topmost process left. A process whose environment was not read (a
// thread in D) is never taken for a launcher or a worker: it keeps an entry of its own. The rank is
// RANK, else SLURM_PROCID, else the task's GLOBALID (also through a wrapper that Slurm started as
// the task).
std::vector<StackTarget> select_step_processes(const std::vector<ProcessFacts>& step_processes);

// Where a py-spy for a process may be, best first: SLURM_DDP_PYSPY (ours, then the process's),
// beside the interpreter the process was started as (a virtual environment's bin/), the
// process's PATH, our PATH. With `as_root` only ours (SLURM_DDP_PYSPY, then PATH): what a
// process of the step says must not choose what root runs. Paths only; the caller keeps the
// first one that is executable (and, as root, passes the root rule of stacks_trust.hpp).
std::vector<std::string> pyspy_candidates(const std::optional<std::string>& our_pyspy,
                                          const ProcessFacts& target,
                                          const std::optional<std::string>& our_path, bool as_root);

// Where gdb may find the Python extension (`py-bt`) of an interpreter, best first: gdb's own
// auto-load folders (`gdb_datadir`/auto-load, /usr/lib/debug) followed by the object's path, where
// distributions put it (Debian's python3-dbg), then beside the object itself (CPython's own
// install, pyenv), which gdb loads only when told (add-auto-load-safe-path). For libpython (when
// mapped) first, then the executable; `beside` marks the second kind.
struct GdbScript {
    std::string path;
    bool beside = false;
};
std::vector<GdbScript> python_gdb_scripts(const std::string& exe, const std::string& libpython,
                                          const std::string& gdb_datadir);

// Executable paths of the tools found on a node ("" when absent).
struct ToolsFound {
    std::string pyspy;
    std::string gdb;
    std::string eu_stack;
    bool gdb_python = false;  // gdb has the target interpreter's extension (py-bt)
    std::string gdb_script;   // an extension beside the interpreter, to allow explicitly
};

struct ToolChoice {
    std::string tool;  // "py-spy", "gdb py-bt", "eu-stack" or "gdb"
    std::string path;
    std::string note;        // a warning for the reader (a Python process read without py-spy)
    std::string gdb_script;  // "gdb py-bt": an extension script gdb must be told it may load
    // gdb reads the process's files from ours (`set sysroot /`): a process in another mount
    // namespace with our root (job_container/tmpfs, namespace/tmpfs) is otherwise read through
    // gdb's target: files, whose names match no auto-load extension, and py-bt is missing.
    bool host_sysroot = false;
};

// py-spy for a Python process, else gdb's py-bt where gdb has the interpreter's extension;
// eu-stack (fast, no symbol load) else gdb for native frames. Errc::unsupported, naming what to
// install, when nothing fits.
Result<ToolChoice> choose_tool(bool python, const ToolsFound& found);

// What reads a Python process whose "gdb py-bt" found no Python frame (an interpreter without
// debug symbols): the native tool choose_tool would give without py-bt, with a note saying why.
Result<ToolChoice> choose_native_fallback(const ToolsFound& found);

// The command that dumps `pid` with `choice`.
std::vector<std::string> tool_command(const ToolChoice& choice, int pid);

}  // namespace sddp::stacks
