// SPDX-License-Identifier: Apache-2.0
#include "stacks_local.hpp"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <sstream>
#include <thread>

#include "core/base/numbers.hpp"
#include "core/options/contract.hpp"
#include "os/host_name.hpp"
#include "stacks_child.hpp"
#include "stacks_frames.hpp"
#include "stacks_slurm.hpp"
#include "stacks_targets.hpp"

namespace sddp::stacks {
namespace {

std::optional<std::string> read_small_file(const std::string& path, std::size_t cap = 1u << 20) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::nullopt;
    std::string text;
    char buf[8192];
    while (in.read(buf, sizeof buf) || in.gcount() > 0) {
        text.append(buf, static_cast<std::size_t>(in.gcount()));
        if (text.size() > cap) break;
    }
    return text;
}

std::optional<std::string> our_env(const char* name) {
    const char* v = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): before any thread
    if (!v) return std::nullopt;
    return std::string(v);
}

std::string node_name() {
    if (auto n = our_env("SLURMD_NODENAME"); n && !n->empty()) return *n;
    const std::string h = local_host_name().value_or("localhost");
    return h.substr(0, h.find('.'));
}

// The facts of one process of the step, or nullopt (another job, gone, not ours to read).
std::optional<ProcessFacts> read_process(int pid, const std::string& job_marker) {
    const std::string dir = "/proc/" + std::to_string(pid);
    const auto environ_text = read_small_file(dir + "/environ");
    if (!environ_text || environ_text->find(job_marker) == std::string::npos) return std::nullopt;
    ProcessFacts p;
    p.pid = pid;
    const auto& wanted = wanted_environment();
    std::size_t start = 0;
    while (start < environ_text->size()) {
        auto end = environ_text->find('\0', start);
        if (end == std::string::npos) end = environ_text->size();
        const std::string_view entry(environ_text->data() + start, end - start);
        const auto eq = entry.find('=');
        if (eq != std::string_view::npos) {
            const std::string name(entry.substr(0, eq));
            if (std::find(wanted.begin(), wanted.end(), name) != wanted.end()) {
                p.env[name] = std::string(entry.substr(eq + 1));
            }
        }
        start = end + 1;
    }
    const auto stat = read_small_file(dir + "/stat");
    if (!stat) return std::nullopt;
    // "pid (comm) S ppid ...": comm may hold spaces and parentheses, so split at the last ')'.
    const auto close = stat->rfind(')');
    if (close == std::string::npos) return std::nullopt;
    std::istringstream rest(stat->substr(close + 1));
    std::string state;
    rest >> state >> p.ppid;
    if (const auto comm = read_small_file(dir + "/comm")) {
        p.comm = *comm;
        while (!p.comm.empty() && p.comm.back() == '\n') p.comm.pop_back();
    }
    if (const auto cmdline = read_small_file(dir + "/cmdline", 1u << 16)) {
        p.argv0 = cmdline->substr(0, cmdline->find('\0'));
    }
    char exe[4096] = {};
    const ssize_t n = ::readlink((dir + "/exe").c_str(), exe, sizeof exe - 1);
    const std::string exe_path = n > 0 ? std::string(exe, static_cast<std::size_t>(n)) : "";
    const std::string exe_base = exe_path.substr(exe_path.rfind('/') + 1);
    p.python = exe_base.rfind("python", 0) == 0 || p.comm.rfind("python", 0) == 0;
    if (!p.python) {
        const auto maps = read_small_file(dir + "/maps", 16u << 20);
        p.python = maps && maps->find("/libpython") != std::string::npos;
    }
    return p;
}

std::vector<ProcessFacts> scan_processes(const std::string& job) {
    std::vector<ProcessFacts> out;
    DIR* d = ::opendir("/proc");
    if (!d) return out;
    const std::string marker = "SLURM_JOB_ID=" + job + std::string(1, '\0');
    const int self = static_cast<int>(::getpid());
    while (const dirent* e = ::readdir(d)) {
        const auto pid = parse_decimal(e->d_name, 1u << 30);
        if (!pid || static_cast<int>(*pid) == self) continue;
        if (auto p = read_process(static_cast<int>(*pid), marker)) out.push_back(std::move(*p));
    }
    ::closedir(d);
    return out;
}

std::string ptrace_scope() {
    auto v = read_small_file("/proc/sys/kernel/yama/ptrace_scope", 64);
    if (!v) return "";
    while (!v->empty() && (v->back() == '\n' || v->back() == ' ')) v->pop_back();
    return *v;
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
    const auto all = scan_processes(job);
    const auto targets = select_step_processes(all, job, step, res.host);
    if (targets.empty()) {
        res.node_errors.push_back("no process of step " + job + "." + step + " on " + res.host +
                                  " (none readable by uid " + std::to_string(::getuid()) +
                                  " carries SLURM_JOB_ID=" + job + " and SLURM_STEP_ID=" + step +
                                  ")");
        return res;
    }
    const auto our_pyspy = our_env(contract::kPyspyVar);
    const auto our_path = our_env("PATH");
    const std::string gdb = find_on_path("gdb");
    const std::string eu_stack = find_on_path("eu-stack");
    const std::string scope = ptrace_scope();

    res.ranks.resize(targets.size());
    std::vector<std::vector<std::string>> commands(targets.size());
    for (std::size_t i = 0; i < targets.size(); ++i) {
        const auto& t = targets[i];
        RankStack& r = res.ranks[i];
        r.host = res.host;
        r.rank = t.rank;
        r.pid = t.pid;
        r.comm = t.comm;
        ToolsFound found{"", gdb, eu_stack};
        if (t.python)
            found.pyspy = first_executable(pyspy_candidates(our_pyspy, *t.facts, our_path));
        auto choice = choose_tool(t.python, found);
        if (!choice) {
            r.error = choice.error().message;
            continue;
        }
        r.tool = choice->tool;
        r.note = choice->note;
        commands[i] = tool_command(*choice, t.pid);
    }
    // One thread per rank: a node holds a handful of ranks, and the tools mostly wait.
    std::vector<std::thread> workers;
    for (std::size_t i = 0; i < targets.size(); ++i) {
        if (commands[i].empty()) continue;
        workers.emplace_back([&, i] {
            RankStack& r = res.ranks[i];
            const ChildResult c = run_bounded(commands[i], per_tool);
            const int seconds = static_cast<int>((per_tool.count() + 999) / 1000);
            if (!c.started) {
                r.error = "cannot run " + r.tool + ": " + c.error;
                return;
            }
            r.frames = parse_tool_output(r.tool, c.out);
            if (c.timed_out || c.exit_status != 0 || r.frames.empty()) {
                r.frames.clear();
                r.error = describe_tool_failure(r.tool, c.timed_out ? -1 : c.exit_status,
                                                c.err + "\n" + c.out, scope, seconds);
            }
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
