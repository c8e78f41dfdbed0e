// SPDX-License-Identifier: Apache-2.0
#include "stacks/stacks_local.hpp"

#include <signal.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <thread>

#include "core/base/numbers.hpp"
#include "os/host_name.hpp"
#include "stacks/stacks_child.hpp"
#include "stacks/stacks_frames.hpp"
#include "stacks/stacks_proc.hpp"
#include "stacks/stacks_procfs.hpp"
#include "stacks/stacks_slurm.hpp"
#include "stacks/stacks_targets.hpp"
#include "stacks/stacks_tools.hpp"
#include "stacks/stacks_trust.hpp"

namespace sddp::stacks {
namespace {

// What listpids and the /proc reads may take before the tools start.
constexpr auto kListBudget = std::chrono::seconds(5);
constexpr auto kReadBudget = std::chrono::seconds(2);

std::string node_name() {
    // NOLINTNEXTLINE(concurrency-mt-unsafe): before any thread
    if (const char* n = std::getenv("SLURMD_NODENAME"); n && *n) return n;
    const std::string h = local_host_name().value_or("localhost");
    return h.substr(0, h.find('.'));
}

std::string ptrace_scope() {
    auto v = read_small_file("/proc/sys/kernel/yama/ptrace_scope", 64);
    if (!v) return "";
    while (!v->empty() && (v->back() == '\n' || v->back() == ' ')) v->pop_back();
    return *v;
}

// The step's processes on this node as slurmstepd counts them, or an error for the node.
Result<std::vector<ListedPid>> list_step_pids(const NodeTools& tools, const std::string& job,
                                              const std::string& step, const std::string& node) {
    if (tools.scontrol.empty()) {
        const std::string refused = describe_refused(tools.refused);
        return make_error(Errc::unsupported,
                          "no scontrol on PATH to ask slurmstepd for the processes of step " + job +
                              "." + step + " (scontrol listpids)" +
                              (refused.empty() ? std::string() : "; " + refused));
    }
    // The node name picks the step daemon's socket in SlurmdSpoolDir (%n) where one machine
    // runs several slurmd; scontrol would otherwise guess it from the host name.
    const ChildResult c =
        run_bounded({tools.scontrol, "listpids", job + "." + step, node}, kListBudget);
    if (!c.started) return make_error(Errc::io, "cannot run " + tools.scontrol + ": " + c.error);
    if (c.timed_out) {
        return make_error(Errc::timeout, "scontrol listpids " + job + "." + step + " " + node +
                                             " did not answer within 5 s (is slurmstepd hung?)");
    }
    auto listed = parse_listpids(c.out, job, step);
    if (listed.empty()) {
        const std::string said = last_line(c.err);
        return make_error(
            Errc::missing_input,
            "no process of step " + job + "." + step + " on " + node + " (scontrol listpids " +
                job + "." + step + " " + node +
                (said.empty() ? std::string(" listed none") : std::string(" says '") + said + "'") +
                "; SLURMD_NODENAME must name this node)");
    }
    return listed;
}

char process_state(int pid) {
    const auto stat = read_small_file("/proc/" + std::to_string(pid) + "/stat", 4096);
    const auto f = stat ? parse_proc_stat(*stat) : std::nullopt;
    return f ? f->state : '?';
}

// Reads one rank with `command` (the tool in r.tool) within `per_tool`, then, where gdb's py-bt
// found no Python frame, with `fallback` (native frames) in what is left of it.
void read_rank(RankStack& r, const std::vector<std::string>& command,
               const std::optional<ToolChoice>& fallback, int pid,
               std::chrono::milliseconds per_tool, const std::string& scope) {
    const auto deadline = std::chrono::steady_clock::now() + per_tool;
    const int seconds = static_cast<int>((per_tool.count() + 999) / 1000);
    const char state_before = process_state(pid);
    ChildResult c = run_bounded(command, per_tool);
    r.frames = c.started ? parse_tool_output(r.tool, c.out) : std::vector<std::string>();
    if (c.started && !c.timed_out && r.frames.empty() && fallback) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        r.tool = fallback->tool;
        r.note = fallback->note + (r.note.empty() ? "" : "; " + r.note);
        c = run_bounded(tool_command(*fallback, pid),
                        std::max(left, std::chrono::milliseconds(1000)));
        r.frames = c.started ? parse_tool_output(r.tool, c.out) : std::vector<std::string>();
    }
    if (!c.started) {
        r.error = "cannot run " + r.tool + ": " + c.error;
        return;
    }
    if (c.timed_out || c.exit_status != 0 || r.frames.empty()) {
        r.frames.clear();
        r.error = describe_tool_failure(r.tool, c.timed_out ? -1 : c.exit_status,
                                        c.err + "\n" + c.out, scope, seconds);
        if (c.unreaped) {
            r.error += "; " + r.tool + " itself is stuck in the kernel and was left behind";
        }
        // A debugger killed between its attach (SIGSTOP) and its detach leaves the process in
        // group stop: a rank that was only slow would stay stopped for good.
        if (state_before != 'T' && process_state(pid) == 'T' && ::kill(pid, SIGCONT) == 0) {
            r.error += "; " + r.tool + " left it stopped, and it was continued (SIGCONT)";
        }
    }
}

std::vector<std::string> rank_lines(const std::vector<RankStack>& ranks) {
    std::vector<std::string> out;
    for (const auto& r : ranks) {
        if (r.error.empty()) continue;
        out.push_back((r.rank ? "rank " + std::to_string(*r.rank) : std::string("process")) + " (" +
                      r.host + " pid " + std::to_string(r.pid) + " " + r.comm + "): " + r.error);
    }
    return out;
}

}  // namespace

LocalResult read_local_stacks(const std::string& job, const std::string& step,
                              std::chrono::milliseconds per_tool) {
    LocalResult res;
    res.host = node_name();
    const NodeTools tools = find_node_tools();
    const auto listed = list_step_pids(tools, job, step, res.host);
    if (!listed) {
        res.node_errors.push_back(listed.error().message);
        return res;
    }
    const auto all = read_step_processes(*listed, std::chrono::steady_clock::now() + kReadBudget);
    const auto targets = select_step_processes(all);
    if (targets.empty()) {
        res.node_errors.push_back("no process of step " + job + "." + step + " on " + res.host +
                                  " is left to read (scontrol listpids named " +
                                  std::to_string(listed->size()) + ", all gone or our own)");
        return res;
    }
    const std::string scope = ptrace_scope();

    res.ranks.resize(targets.size());
    std::vector<std::vector<std::string>> commands(targets.size());
    std::vector<std::optional<ToolChoice>> fallbacks(targets.size());
    for (std::size_t i = 0; i < targets.size(); ++i) {
        const auto& t = targets[i];
        RankStack& r = res.ranks[i];
        r.host = res.host;
        r.rank = t.rank;
        r.pid = t.pid;
        r.comm = t.comm;
        if (t.facts->blocked) {
            auto e = blocked_entry(*t.facts);
            r.tool = e.tool;
            r.note = e.note;
            r.frames = std::move(e.frames);
            continue;
        }
        if (!t.facts->read_error.empty()) {
            r.error = t.facts->read_error;
            continue;
        }
        std::vector<std::string> refused;
        const ToolsFound found = tools_for(tools, *t.facts, refused);
        auto choice = choose_tool(t.python, found);
        if (!choice) {
            std::vector<std::string> all_refused = tools.refused;
            all_refused.insert(all_refused.end(), refused.begin(), refused.end());
            const std::string why = describe_refused(all_refused);
            r.error = choice.error().message + (why.empty() ? "" : "; " + why);
            continue;
        }
        r.tool = choice->tool;
        r.note = choice->note;
        if (choice->tool == "gdb py-bt") {
            if (auto native = choose_native_fallback(found)) fallbacks[i] = *native;
        }
        if (choice->tool != "py-spy" && !refused.empty()) {
            r.note += (r.note.empty() ? "" : "; py-spy ") + describe_refused(refused);
        }
        choice->host_sysroot = t.facts->host_root;
        commands[i] = tool_command(*choice, t.pid);
    }
    // One thread per rank: a node holds a handful of ranks, and the tools mostly wait.
    std::vector<std::thread> workers;
    for (std::size_t i = 0; i < targets.size(); ++i) {
        if (commands[i].empty()) continue;
        workers.emplace_back([&, i] {
            read_rank(res.ranks[i], commands[i], fallbacks[i], targets[i].pid, per_tool, scope);
        });
    }
    for (auto& w : workers) w.join();
    return res;
}

int run_stacks_local(const std::vector<std::string>& args) {
    std::optional<std::string> target;
    long timeout_s = 20;
    bool report = false;
    for (const auto& a : args) {
        if (a.rfind("--timeout=", 0) == 0) {
            const auto v = parse_decimal(a.substr(10), 3600);
            if (!v || *v == 0) {
                std::cerr << "slurm-ddp stacks: --timeout=" << a.substr(10)
                          << " is not a number of seconds between 1 and 3600\n";
                return 2;
            }
            timeout_s = static_cast<long>(*v);
        } else if (a == "--report") {
            report = true;
        } else if (!target && a.rfind("--", 0) != 0) {
            target = a;
        } else {
            std::cerr << "slurm-ddp stacks: unexpected argument '" << a
                      << "'; usage: slurm-ddp stacks --local JOBID.STEPID [--timeout=SECONDS] "
                         "[--report]\n";
            return 2;
        }
    }
    if (!target) {
        std::cerr << "slurm-ddp stacks: --local needs JOBID.STEPID\n";
        return 2;
    }
    auto t = parse_step_target(*target);
    if (!t || !t->step) {
        std::cerr << "slurm-ddp stacks: --local needs JOBID.STEPID, got '" << *target << "'\n";
        return 2;
    }
    const auto res = read_local_stacks(t->job, *t->step, std::chrono::seconds(timeout_s));
    auto problems = rank_lines(res.ranks);
    for (const auto& e : res.node_errors) problems.push_back(e);
    if (report) {
        std::cout << format_groups(group_stacks(res.ranks));
        for (const auto& p : problems) std::cout << "error: " << p << "\n";
    } else {
        std::cout << encode_records(res.host, res.ranks, res.node_errors);
    }
    std::cout.flush();
    return problems.empty() ? 0 : 1;
}

}  // namespace sddp::stacks
