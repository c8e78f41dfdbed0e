// SPDX-License-Identifier: Apache-2.0
#include "stacks/stacks_targets.hpp"

#include <algorithm>
#include <set>

#include "core/base/numbers.hpp"
#include "core/contract/contract.hpp"
#include "stacks/stacks_gdb_python.hpp"

namespace sddp::stacks {
namespace {

std::optional<std::string> env_of(const ProcessFacts& p, const std::string& name) {
    const auto it = p.env.find(name);
    if (it == p.env.end()) return std::nullopt;
    return it->second;
}

std::optional<long> number_of(const std::optional<std::string>& v) {
    if (!v) return std::nullopt;
    const auto n = parse_decimal(*v, 1u << 30);
    if (!n) return std::nullopt;
    return static_cast<long>(*n);
}

// Programs that only run another: their stack says nothing about the rank.
bool is_wrapper(const std::string& comm) {
    static const std::set<std::string> kWrappers{"sh",      "bash",    "dash",   "zsh",   "ksh",
                                                 "timeout", "env",     "stdbuf", "nice",  "nohup",
                                                 "numactl", "taskset", "time",   "setsid"};
    return kWrappers.count(comm) != 0;
}

std::string dir_of(const std::string& path) {
    const auto slash = path.rfind('/');
    return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

void add_path_dirs(const std::optional<std::string>& path, std::vector<std::string>& out) {
    if (!path) return;
    std::size_t start = 0;
    while (start <= path->size()) {
        const auto colon = path->find(':', start);
        const auto dir =
            path->substr(start, colon == std::string::npos ? std::string::npos : colon - start);
        if (!dir.empty() && dir.front() == '/') out.push_back(dir + "/py-spy");
        if (colon == std::string::npos) break;
        start = colon + 1;
    }
}

}  // namespace

const std::vector<std::string>& wanted_environment() {
    static const std::vector<std::string> kNames{"SLURM_PROCID", "RANK", "PATH",
                                                 contract::kPyspyVar};
    return kNames;
}

std::vector<StackTarget> select_step_processes(const std::vector<ProcessFacts>& step_processes) {
    const auto by_pid = [&](int pid) -> const ProcessFacts* {
        for (const auto& p : step_processes) {
            if (p.pid == pid) return &p;
        }
        return nullptr;
    };
    // RANK and SLURM_PROCID only name the rank of a process Slurm already counts in the step.
    // Without them (not read, or cleared by the program) the task's GLOBALID, which a wrapper
    // Slurm started passes to what it runs.
    const auto rank_of = [&](const ProcessFacts& p) {
        const auto own = [&](const ProcessFacts& q) {
            auto r = number_of(env_of(q, "RANK"));
            if (!r) r = number_of(env_of(q, "SLURM_PROCID"));
            return r ? r : q.task_rank;
        };
        if (auto r = own(p)) return r;
        for (const ProcessFacts* up = by_pid(p.ppid); up && is_wrapper(up->comm);
             up = by_pid(up->ppid)) {
            if (auto r = own(*up)) return r;
            if (up->pid == up->ppid) break;
        }
        return std::optional<long>();
    };

    // The step daemon started the tasks; whatever else it started beside them (a SPANK plugin's
    // helper process) runs no program of the job.
    std::set<int> step_daemons;
    for (const auto& p : step_processes) {
        if (p.task_rank) step_daemons.insert(p.ppid);
    }
    std::set<int> dropped;
    for (const auto& p : step_processes) {
        if (!p.task_rank && step_daemons.count(p.ppid)) dropped.insert(p.pid);
        const ProcessFacts* parent = by_pid(p.ppid);
        if (!parent) continue;
        if (is_wrapper(parent->comm)) dropped.insert(parent->pid);
        // A launcher: no RANK of its own, children with one (torchrun's workers). Unknown when
        // its environment was not read: then it stays.
        if (parent->env_known && !env_of(*parent, "RANK") && env_of(p, "RANK")) {
            dropped.insert(parent->pid);
        }
    }
    std::vector<StackTarget> out;
    for (const auto& p : step_processes) {
        if (dropped.count(p.pid)) continue;
        const auto rank = rank_of(p);
        // A child of the rank's own process (a data loader worker, a compiler): skip it, unless
        // its own environment is unknown: a process in D is reported, whoever its parent is.
        bool below_own_rank = false;
        for (const ProcessFacts* up = by_pid(p.ppid); up && p.env_known; up = by_pid(up->ppid)) {
            if (!dropped.count(up->pid) && rank_of(*up) == rank) {
                below_own_rank = true;
                break;
            }
            if (up->pid == up->ppid) break;
        }
        if (below_own_rank) continue;
        out.push_back(StackTarget{p.pid, rank, p.comm, p.python, &p});
    }
    std::sort(out.begin(), out.end(), [](const StackTarget& a, const StackTarget& b) {
        return std::make_pair(a.rank.value_or(-1), a.pid) <
               std::make_pair(b.rank.value_or(-1), b.pid);
    });
    return out;
}

std::vector<std::string> pyspy_candidates(const std::optional<std::string>& our_pyspy,
                                          const ProcessFacts& target,
                                          const std::optional<std::string>& our_path,
                                          bool as_root) {
    std::vector<std::string> out;
    if (our_pyspy && !our_pyspy->empty()) out.push_back(*our_pyspy);
    if (!as_root) {
        if (auto v = env_of(target, contract::kPyspyVar); v && !v->empty()) out.push_back(*v);
        if (!target.argv0.empty() && target.argv0.front() == '/') {
            out.push_back(dir_of(target.argv0) + "/py-spy");
        }
        add_path_dirs(env_of(target, "PATH"), out);
    }
    add_path_dirs(our_path, out);
    return out;
}

std::vector<GdbScript> python_gdb_scripts(const std::string& exe, const std::string& libpython,
                                          const std::string& gdb_datadir) {
    std::vector<GdbScript> out;
    std::vector<std::string> objects;
    for (const auto* o : {&libpython, &exe}) {
        if (!o->empty() && o->front() == '/') objects.push_back(*o);
    }
    const auto script = [](std::string folder, const std::string& object) {
        folder += object;
        folder += "-gdb.py";
        return folder;
    };
    for (const auto& o : objects) {
        // gdb's own auto-load folders, where it loads from without being told.
        if (!gdb_datadir.empty()) out.push_back({script(gdb_datadir + "/auto-load", o), false});
        out.push_back({script("/usr/lib/debug", o), false});
    }
    for (const auto& o : objects) out.push_back({script("", o), true});
    return out;
}

Result<ToolChoice> choose_tool(bool python, const ToolsFound& found) {
    if (python && !found.pyspy.empty()) return ToolChoice{"py-spy", found.pyspy, "", ""};
    if (python && found.gdb_python && !found.gdb.empty()) {
        return ToolChoice{"gdb py-bt", found.gdb, "", found.gdb_script};
    }
    const std::string note =
        python ? "a Python process read without py-spy: native frames only; for Python frames "
                 "install py-spy (pip install py-spy) or set " +
                     std::string(contract::kPyspyVar) +
                     "=PATH, or the interpreter's gdb extension (Debian: python3-dbg)"
               : std::string();
    if (!found.eu_stack.empty()) return ToolChoice{"eu-stack", found.eu_stack, note, ""};
    if (!found.gdb.empty()) return ToolChoice{"gdb", found.gdb, note, ""};
    return make_error(Errc::unsupported,
                      python ? "no tool to read the stack of a Python process: install py-spy "
                               "(pip install py-spy, or set " +
                                   std::string(contract::kPyspyVar) +
                                   "=PATH), or gdb / elfutils (eu-stack) for native frames"
                             : std::string("no tool to read a native stack: install elfutils "
                                           "(eu-stack) or gdb on the node"));
}

Result<ToolChoice> choose_native_fallback(const ToolsFound& found) {
    ToolsFound native = found;
    native.pyspy.clear();
    native.gdb_python = false;
    auto choice = choose_tool(true, native);
    if (choice) {
        choice->note =
            "gdb's py-bt found no Python frame (no debug symbols for the interpreter?); " +
            choice->note;
    }
    return choice;
}

std::vector<std::string> tool_command(const ToolChoice& choice, int pid) {
    const std::string p = std::to_string(pid);
    if (choice.tool == "py-spy") return {choice.path, "dump", "--pid", p};
    if (choice.tool == "gdb py-bt") {
        // The interpreter's symbols alone: loading those of every library (PyTorch's run to
        // gigabytes) takes gdb 15 s and more, so only libpython's are (the executable's always
        // are). debuginfod would fetch symbols over the network past the bound.
        std::vector<std::string> cmd{choice.path, "-p", p,      "-batch",
                                     "-nx",       "-q", "-iex", "set debuginfod enabled off"};
        if (choice.host_sysroot) cmd.insert(cmd.end(), {"-iex", "set sysroot /"});
        if (!choice.gdb_script.empty()) {
            cmd.insert(cmd.end(), {"-iex", "add-auto-load-safe-path " + choice.gdb_script});
        }
        cmd.insert(cmd.end(), {"-iex", "set auto-solib-add off", "-ex", "sharedlibrary libpython",
                               "-ex", "set pagination off", "-ex", gdb_python_frames_command()});
        return cmd;
    }
    if (choice.tool == "gdb") {
        return {choice.path, "-p",
                p,           "-batch",
                "-nx",       "-q",
                "-ex",       "set pagination off",
                "-ex",       "thread apply all bt"};
    }
    return {choice.path, "-p", p};
}

}  // namespace sddp::stacks
