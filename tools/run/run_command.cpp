// SPDX-License-Identifier: Apache-2.0
#include "run/run_command.hpp"

#include <csignal>
#include <cstdint>
#include <cstring>
#include <iostream>

#include "core/contract/contract.hpp"
#include "core/slurm/hostlist.hpp"
#include "os/process_env.hpp"
#include "run/run_args.hpp"
#include "run/run_plan.hpp"
#include "run/run_signals.hpp"
#include "run/run_srun.hpp"

namespace sddp::cli {
namespace {

std::string run_usage() {
    return std::string(
               "usage: slurm-ddp run [--restarts=N] -N COUNT|MIN-MAX [srun options] -- program "
               "[args...]\n"
               "Runs the program as an `srun --ddp` step inside this allocation (sbatch or "
               "salloc).\nWhen a run fails, the node of its first failure is left out and the "
               "program starts\nagain on the remaining nodes of the allocation, at most N times "
               "(0-100, default 0),\nwith ") +
           contract::kRestartsVar +
           " one higher. Prints one summary line per run on stderr;\nexits with the last run's "
           "status. srun options pass through, except -w/--nodelist,\n-F/--nodefile and "
           "-r/--relative.\n";
}

int bad_input(const std::string& message) {
    std::cerr << "slurm-ddp run: error: " << message << "\n";
    return 1;
}

std::string signal_name(int sig) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
    if (const char* abbrev = sigabbrev_np(sig)) return std::string("SIG") + abbrev;
#endif
    return "signal " + std::to_string(sig);
}

std::vector<std::string> srun_argv(const run::RunRequest& req,
                                   const std::vector<std::string>& nodes) {
    std::vector<std::string> argv{"srun"};
    if (!req.has_ddp) argv.emplace_back("--ddp");
    // Without fail fast in the plugin, the ranks left after one failed would wait in a collective
    // until their own timeout; srun ends them instead (the user's -K wins).
    if (!req.has_kill_on_bad_exit) argv.emplace_back("--kill-on-bad-exit=1");
    argv.push_back("--nodes=" + std::to_string(nodes.size()));
    argv.push_back("--nodelist=" + compress_hostlist(nodes));
    argv.insert(argv.end(), req.srun_options.begin(), req.srun_options.end());
    argv.insert(argv.end(), req.program.begin(), req.program.end());
    return argv;
}

// The allocation's task count, which srun would take for the step's (sbatch -N3
// --ntasks-per-node=4 exports SLURM_NTASKS=12, too many for -N2): without the user's -n, the
// step's tasks follow from its nodes and the tasks per node.
std::vector<std::string> inherited_task_count(const run::RunRequest& req) {
    if (req.has_ntasks) return {};
    return {"SLURM_NTASKS", "SLURM_NPROCS"};
}

// A summary starts a line of its own, also after a task's output that did not end one.
void say(const std::string& line, bool mid_line = false) {
    std::cerr << (mid_line ? "\n" : "") << line << std::endl;
}

// Whether srun may be given --error=/dev/fd/N to keep the tasks' stderr apart from its own
// messages: not where the user chose where stderr goes, on the command line or in srun's
// environment (SLURM_STDOUTMODE counts too: without -e, srun sends stderr where stdout goes).
bool tasks_stderr_apart(const run::RunRequest& req, const EnvLookup& env) {
    return !req.has_own_stderr && !env("SLURM_STDERRMODE") && !env("SLURM_STDOUTMODE");
}

// The end of the last summary line when a SIGUSR1/SIGUSR2 came and no srun took it (it came
// between runs or as srun ended, and no run follows): said, not silently dropped.
std::string held_note(run::SignalCatcher& signals) {
    signals.collect();
    std::string names;
    for (int sig : signals.held()) names += (names.empty() ? "" : " and ") + signal_name(sig);
    return names.empty() ? "" : "; " + names + " not passed on: no srun was left to take it";
}

}  // namespace

int run_run_command(const std::vector<std::string>& args) {
    auto parsed = run::parse_run_args(args);
    if (!parsed) {
        std::cerr << "slurm-ddp run: " << parsed.error().message << "\n" << run_usage();
        return 2;
    }
    const run::RunRequest& req = *parsed;
    if (req.help) {
        std::cout << run_usage();
        return 0;
    }
    const EnvLookup env = process_env();
    const auto job_id = env("SLURM_JOB_ID");
    if (!job_id || job_id->empty()) {
        return bad_input(
            "SLURM_JOB_ID is not set: slurm-ddp run starts steps inside an allocation; run it "
            "in an sbatch script or under salloc, with spare nodes (e.g. salloc -N3 slurm-ddp run "
            "--restarts=1 -N2 -- ./train)");
    }
    const auto nodelist = env("SLURM_JOB_NODELIST");
    if (!nodelist || nodelist->empty()) {
        return bad_input("SLURM_JOB_NODELIST is not set although SLURM_JOB_ID=" + *job_id +
                         " is: run slurm-ddp run in the job's batch script or salloc shell");
    }
    auto allocation = expand_hostlist(*nodelist);
    if (!allocation) return bad_input("SLURM_JOB_NODELIST: " + allocation.error().message);
    auto base = run::first_restart_count(env("SLURM_RESTART_COUNT"));
    if (!base) return bad_input(base.error().message);

    run::NodePool pool{*allocation, *nodelist, req.excluded, {}};
    auto first_nodes = run::choose_run_nodes(pool, req);
    if (!first_nodes) return bad_input(first_nodes.error().message);

    auto signals = run::SignalCatcher::install();
    if (!signals) return bad_input(signals.error().message);

    const std::uint32_t max_runs = req.restarts + 1;
    for (std::uint32_t k = 0; k < max_runs; ++k) {
        auto nodes = run::choose_run_nodes(pool, req);
        if (!nodes) return bad_input(nodes.error().message);  // checked before the restart
        (*signals)->collect();
        if (const int sig = (*signals)->stop()) {
            say("slurm-ddp run: stopped by " + signal_name(sig) + " before run " +
                std::to_string(k + 1) + ", not restarting" + held_note(**signals));
            return 128 + sig;
        }

        run::RunRecord rec;
        rec.number = k + 1;
        rec.max_runs = max_runs;
        rec.nodes = *nodes;
        rec.restart_count = *base + k;
        const std::vector<std::string> extra{
            std::string(contract::kRestartsVar) + "=" + std::to_string(rec.restart_count),
            std::string(contract::kRestartsJobVar) + "=" + *job_id};
        const run::SrunCall call{srun_argv(req, *nodes), extra, inherited_task_count(req),
                                 tasks_stderr_apart(req, env)};
        auto outcome = run::run_srun(call, **signals);
        if (!outcome) return bad_input(outcome.error().message);
        rec.srun_status = outcome->status;
        rec.failure = outcome->failure;
        const int status = run::run_exit_status(rec);

        if (outcome->stopped_by != 0) {
            say(run::summary_line(rec, "stopped by " + signal_name(outcome->stopped_by) +
                                           ", not restarting" + held_note(**signals)),
                outcome->stderr_mid_line);
            return 128 + outcome->stopped_by;
        }
        if (rec.srun_status == 0) {
            const std::string note = held_note(**signals);
            say(run::summary_line(rec, note.empty() ? "" : note.substr(2)),
                outcome->stderr_mid_line);
            return 0;
        }
        if (k + 1 == max_runs) {
            say(run::summary_line(
                    rec, "no restarts left (--restarts=" + std::to_string(req.restarts) +
                             "), exit status " + std::to_string(status) + held_note(**signals)),
                outcome->stderr_mid_line);
            return status;
        }
        if (!rec.failure || rec.failure->node.empty()) {
            say(run::summary_line(rec, "not restarting: no failed node to leave out, exit status " +
                                           std::to_string(status) + held_note(**signals)),
                outcome->stderr_mid_line);
            return status;
        }
        const std::string& bad = rec.failure->node;
        bool in_run = false;
        for (const auto& n : rec.nodes) in_run = in_run || n == bad;
        if (!in_run) {
            say(run::summary_line(rec, "not restarting: the failed node " + bad +
                                           " is not one of this run's, exit status " +
                                           std::to_string(status) + held_note(**signals)),
                outcome->stderr_mid_line);
            return status;
        }
        pool.failed.push_back(bad);
        auto next = run::choose_run_nodes(pool, req);
        if (!next) {
            say(run::summary_line(rec, "not restarting, exit status " + std::to_string(status) +
                                           held_note(**signals)),
                outcome->stderr_mid_line);
            bad_input(next.error().message);
            return status;
        }
        say(run::summary_line(rec, "restarting without " + bad + " on " + compress_hostlist(*next)),
            outcome->stderr_mid_line);
    }
    return 1;  // not reached: the last run returns above
}

}  // namespace sddp::cli
