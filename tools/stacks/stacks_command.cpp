// SPDX-License-Identifier: Apache-2.0
#include "stacks/stacks_command.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <set>
#include <string_view>

#include "core/base/numbers.hpp"
#include "core/contract/contract.hpp"
#include "core/slurm/hostlist.hpp"
#include "stacks/stacks_child.hpp"
#include "stacks/stacks_local.hpp"
#include "stacks/stacks_report.hpp"
#include "stacks/stacks_slurm.hpp"
#include "stacks/stacks_trust.hpp"

extern char** environ;

namespace sddp::stacks {
namespace {

constexpr const char* kUsage =
    "usage: slurm-ddp stacks [--timeout=SECONDS] JOBID[.STEPID]\n"
    "       slurm-ddp stacks --local JOBID.STEPID [--timeout=SECONDS] [--report]\n";
constexpr long kDefaultTimeout = 30;
// Kept out of the tools' bound: srun starting the step, listpids and /proc on the nodes, a tool
// stopped at its bound (SIGTERM, SIGKILL 2 s later, 1 s for it to go), and 3 s for srun's stop.
constexpr long kSrunOverhead = 8;

using Clock = std::chrono::steady_clock;

int error(const std::string& message) {
    std::cerr << "slurm-ddp stacks: error: " << message << "\n";
    return 1;
}

std::string self_path() {
    char buf[4096] = {};
    const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
    return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string("slurm-ddp");
}

// Our environment less Slurm's input variables (an allocation's SLURM_NTASKS, a batch script's
// --ddp), which would reshape or alter the srun that reaches the step's nodes, and with --ddp
// off. Our py-spy goes along: as root it is the only one the nodes' part may use.
std::vector<std::string> srun_environment() {
    const std::string pyspy = std::string(contract::kPyspyVar) + "=";
    std::vector<std::string> env;
    for (char** e = environ; *e; ++e) {
        const std::string entry(*e);
        if (entry.rfind("SLURM_", 0) == 0 && entry.rfind("SLURM_CONF=", 0) != 0 &&
            entry.rfind(pyspy, 0) != 0) {
            continue;
        }
        env.push_back(entry);
    }
    // The collectors are no DDP step: where the site turns --ddp on for every step, a node's
    // collector failing must not end the others (fail fast), nor get DDP variables.
    env.push_back(std::string(contract::kDdpOptionEnvVar) + "=off");
    return env;
}

// True once `out` holds the closing record of `nodes` nodes: srun may then be kept waiting by
// slurmstepd (a tool stuck in the kernel, left in the step's cgroup), which the report need not.
std::function<bool(std::string_view)> all_nodes_done(std::size_t nodes) {
    const std::string tag = "SDDP-STACK\tdone\t";
    return [tag, nodes, scanned = std::size_t{0},
            seen = std::size_t{0}](std::string_view out) mutable {
        // Only what came since the last call, less a tag's length that may straddle it.
        std::size_t at = scanned > tag.size() ? scanned - tag.size() : 0;
        while ((at = out.find(tag, at)) != std::string_view::npos) {
            if (at + tag.size() > scanned) ++seen;
            at += tag.size();
        }
        scanned = out.size();
        return seen >= nodes;
    };
}

// `name` as run: found on PATH by the spawn, or as root the first one that passes the root rule.
Result<std::string> slurm_command(const std::string& name) {
    if (::geteuid() != 0) return name;
    // NOLINTNEXTLINE(concurrency-mt-unsafe): no thread runs yet
    const char* path = std::getenv("PATH");
    const auto picked = pick_executable(path_candidates(name, path ? path : ""), true);
    if (!picked.path.empty()) return picked.path;
    return make_error(Errc::missing_input,
                      "no " + name + " on PATH that root may run" +
                          (picked.refused.empty() ? std::string()
                                                  : " (" + describe_refused(picked.refused) + ")") +
                          ": run slurm-ddp stacks on a host with Slurm's client commands");
}

long seconds_left(Clock::time_point deadline) {
    return static_cast<long>(
        std::chrono::duration_cast<std::chrono::seconds>(deadline - Clock::now()).count());
}

}  // namespace

int run_stacks_command(const std::vector<std::string>& args) {
    if (!args.empty() && args[0] == "--local") {
        return run_stacks_local({args.begin() + 1, args.end()});
    }
    long timeout_s = kDefaultTimeout;
    std::string target_text;
    for (const auto& a : args) {
        if (a.rfind("--timeout=", 0) == 0) {
            const auto v = parse_decimal(a.substr(10), 3600);
            if (!v || *v < 10) {
                std::cerr << "slurm-ddp stacks: --timeout=" << a.substr(10)
                          << " is not a number of seconds between 10 and 3600\n"
                          << kUsage;
                return 2;
            }
            timeout_s = static_cast<long>(*v);
        } else if (a == "-h" || a == "--help") {
            std::cout << kUsage;
            return 0;
        } else if (target_text.empty() && a.rfind('-', 0) != 0) {
            target_text = a;
        } else {
            std::cerr << "slurm-ddp stacks: unexpected argument '" << a << "'\n" << kUsage;
            return 2;
        }
    }
    if (target_text.empty()) {
        std::cerr << "slurm-ddp stacks: missing JOBID[.STEPID]\n" << kUsage;
        return 2;
    }
    const auto target = parse_step_target(target_text);
    if (!target) return error(target.error().message);
    const auto started = Clock::now();
    const auto deadline = started + std::chrono::seconds(timeout_s);
    const auto scontrol = slurm_command("scontrol");
    if (!scontrol) return error(scontrol.error().message);
    const auto srun = slurm_command("srun");
    if (!srun) return error(srun.error().message);

    const ChildResult show =
        run_bounded({*scontrol, "show", "step", "-o", target_text}, std::chrono::seconds(10));
    if (!show.started) {
        return error("cannot run scontrol (" + show.error +
                     "): run slurm-ddp stacks on a host with Slurm's client commands");
    }
    if (show.timed_out) return error("scontrol show step " + target_text + " took over 10 s");
    if (show.exit_status != 0) {
        return error("job " + target_text + ": scontrol show step says '" + last_line(show.err) +
                     "': is the job running? (squeue -j " + target->job + ")");
    }
    const auto step = pick_step(parse_show_step(show.out), *target);
    if (!step) return error(step.error().message);
    auto nodes = expand_hostlist(step->nodelist);
    if (!nodes) {
        return error("step " + step->job + "." + step->step +
                     ": its node list: " + nodes.error().message);
    }
    const std::string n = std::to_string(nodes->size());
    const std::string step_name = step->job + "." + step->step;
    const long tool_s = std::max(3L, seconds_left(deadline) - kSrunOverhead);
    // srun's own stop at its bound may take 2 s more (run_bounded): 3 s are kept for it.
    const ChildResult run = run_bounded(
        {*srun, "--jobid=" + step->job, "--overlap", "--nodelist=" + step->nodelist, "-N", n, "-n",
         n, "--ntasks-per-node=1", "--label", "--quiet", "--job-name=slurm-ddp-stacks", self_path(),
         "stacks", "--local", step_name, "--timeout=" + std::to_string(tool_s)},
        std::chrono::seconds(std::max(1L, seconds_left(deadline) - 3)), srun_environment(),
        all_nodes_done(nodes->size()));
    if (!run.started) return error("cannot run srun (" + run.error + ")");

    const Collected got = decode_records(run.out);
    const auto groups = group_stacks(got.ranks);
    std::set<std::string> hosts;
    for (const auto& r : got.ranks) hosts.insert(r.host);
    const double took = std::chrono::duration<double>(Clock::now() - started).count();
    char took_text[32];
    (void)std::snprintf(took_text, sizeof took_text, "%.1f", took);
    std::cout << "slurm-ddp stacks: step " << step_name << ": " << got.ranks.size()
              << " process(es) on " << compress_hostlist({hosts.begin(), hosts.end()}) << ", "
              << groups.size() << " different stack(s), odd ones first (" << took_text << " s)\n\n"
              << format_groups(groups);
    std::cout.flush();

    int problems = 0;
    for (const auto& r : got.ranks) {
        if (r.error.empty()) continue;
        ++problems;
        std::cerr << "slurm-ddp stacks: error: "
                  << (r.rank ? "rank " + std::to_string(*r.rank) : std::string("process")) << " ("
                  << r.host << " pid " << r.pid << " " << r.comm << "): " << r.error << "\n";
    }
    for (const auto& [host, messages] : got.node_errors) {
        for (const auto& m : messages) {
            ++problems;
            std::cerr << "slurm-ddp stacks: error: " << host << ": " << m << "\n";
        }
    }
    for (const auto& node : *nodes) {
        if (std::find(got.nodes_done.begin(), got.nodes_done.end(), node) != got.nodes_done.end())
            continue;
        ++problems;
        std::cerr << "slurm-ddp stacks: error: node " << node << " did not report"
                  << (run.timed_out ? " within " + std::to_string(timeout_s) + " s" : "")
                  << (run.err.empty() ? std::string() : " (srun: " + last_line(run.err) + ")")
                  << "\n";
    }
    if (got.ranks.empty() && problems == 0) {
        ++problems;
        std::cerr << "slurm-ddp stacks: error: no rank of step " << step_name << " was found\n";
    }
    return problems == 0 ? 0 : 1;
}

}  // namespace sddp::stacks
