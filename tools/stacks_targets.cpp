// SPDX-License-Identifier: Apache-2.0
#include "stacks_targets.hpp"

#include <algorithm>
#include <set>

#include "core/base/numbers.hpp"
#include "core/options/contract.hpp"

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
    static const std::vector<std::string> kNames{
        "SLURM_JOB_ID", "SLURM_STEP_ID", "SLURM_STEPID", "SLURMD_NODENAME",
        "SLURM_PROCID", "RANK",          "PATH",         contract::kPyspyVar};
    return kNames;
}

std::vector<StackTarget> select_step_processes(const std::vector<ProcessFacts>& all,
                                               const std::string& job, const std::string& step,
                                               const std::string& node) {
    std::vector<const ProcessFacts*> in_step;
    for (const auto& p : all) {
        if (env_of(p, "SLURM_JOB_ID") != job) continue;
        const auto s =
            env_of(p, "SLURM_STEP_ID") ? env_of(p, "SLURM_STEP_ID") : env_of(p, "SLURM_STEPID");
        if (s != step) continue;
        const auto n = env_of(p, "SLURMD_NODENAME");
        if (n && *n != node) continue;
        in_step.push_back(&p);
    }
    const auto by_pid = [&](int pid) -> const ProcessFacts* {
        for (const auto* p : in_step) {
            if (p->pid == pid) return p;
        }
        return nullptr;
    };
    const auto rank_of = [&](const ProcessFacts& p) {
        auto r = number_of(env_of(p, "RANK"));
        return r ? r : number_of(env_of(p, "SLURM_PROCID"));
    };

    std::set<int> dropped;
    for (const auto* p : in_step) {
        const ProcessFacts* parent = by_pid(p->ppid);
        if (!parent) continue;
        if (is_wrapper(parent->comm)) dropped.insert(parent->pid);
        // A launcher: no RANK of its own, children with one (torchrun's workers).
        if (!env_of(*parent, "RANK") && env_of(*p, "RANK")) dropped.insert(parent->pid);
    }
    std::vector<StackTarget> out;
    for (const auto* p : in_step) {
        if (dropped.count(p->pid)) continue;
        const auto rank = rank_of(*p);
        // A child of the rank's own process (a data loader worker, a compiler): skip it.
        bool below_own_rank = false;
        for (const ProcessFacts* up = by_pid(p->ppid); up; up = by_pid(up->ppid)) {
            if (!dropped.count(up->pid) && rank_of(*up) == rank) {
                below_own_rank = true;
                break;
            }
            if (up->pid == up->ppid) break;
        }
        if (below_own_rank) continue;
        out.push_back(StackTarget{p->pid, rank, p->comm, p->python, p});
    }
    std::sort(out.begin(), out.end(), [](const StackTarget& a, const StackTarget& b) {
        return std::make_pair(a.rank.value_or(-1), a.pid) <
               std::make_pair(b.rank.value_or(-1), b.pid);
    });
    return out;
}

std::vector<std::string> pyspy_candidates(const std::optional<std::string>& our_pyspy,
                                          const ProcessFacts& target,
                                          const std::optional<std::string>& our_path) {
    std::vector<std::string> out;
    if (our_pyspy && !our_pyspy->empty()) out.push_back(*our_pyspy);
    if (auto v = env_of(target, contract::kPyspyVar); v && !v->empty()) out.push_back(*v);
    if (!target.argv0.empty() && target.argv0.front() == '/') {
        out.push_back(dir_of(target.argv0) + "/py-spy");
    }
    add_path_dirs(env_of(target, "PATH"), out);
    add_path_dirs(our_path, out);
    return out;
}

Result<ToolChoice> choose_tool(bool python, const ToolsFound& found) {
    if (python && !found.pyspy.empty()) return ToolChoice{"py-spy", found.pyspy, ""};
    const std::string note =
        python ? "a Python process read without py-spy: native frames only; for Python frames "
                 "install py-spy (pip install py-spy) or set " +
                     std::string(contract::kPyspyVar) + "=PATH"
               : std::string();
    if (!found.eu_stack.empty()) return ToolChoice{"eu-stack", found.eu_stack, note};
    if (!found.gdb.empty()) return ToolChoice{"gdb", found.gdb, note};
    return make_error(Errc::unsupported,
                      python ? "no tool to read the stack of a Python process: install py-spy "
                               "(pip install py-spy, or set " +
                                   std::string(contract::kPyspyVar) +
                                   "=PATH), or gdb / elfutils (eu-stack) for native frames"
                             : std::string("no tool to read a native stack: install elfutils "
                                           "(eu-stack) or gdb on the node"));
}

std::vector<std::string> tool_command(const ToolChoice& choice, int pid) {
    const std::string p = std::to_string(pid);
    if (choice.tool == "py-spy") return {choice.path, "dump", "--pid", p};
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
