// SPDX-License-Identifier: Apache-2.0
// slurm-ddp: the command-line face of the shared core, for users and admins.
//
//   slurm-ddp hostnames LIST        expand a Slurm host list, one host per line
//   slurm-ddp task-counts SPEC      expand "2(x3),1", one count per line
//   slurm-ddp env [--options=OPTS] [--plugstack=FILE] [--table]
//                                   print the environment --ddp would give this task
//                                   (run it as `srun slurm-ddp env`)
//   slurm-ddp check-options OPTS    validate a --ddp value; `--site ARGS...` for plugin args
//   slurm-ddp options [--markdown|--names]
//                                   the option table (what `srun --ddp=help` prints)
//   slurm-ddp run [--restarts=N] -N COUNT [srun options] -- program ...
//                                   run the program as an srun --ddp step of this allocation,
//                                   again on the remaining nodes after a failure
//   slurm-ddp stacks JOBID[.STEPID]  the stack of every rank of a running step, grouped
//   slurm-ddp --version             library version, the Slurm it was built for, NCCL
//
// Exit codes: 0 success, 1 bad input (message on stderr), 2 usage error.
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "check/check_command.hpp"
#include "core/options/options.hpp"
#include "core/options/options_help.hpp"
#include "core/slurm/hostlist.hpp"
#include "core/slurm/task_counts.hpp"
#include "env/env_command.hpp"
#include "run/run_command.hpp"
#include "stacks/stacks_command.hpp"
#include "version_report.hpp"

namespace {

constexpr const char* kUsage =
    "usage: slurm-ddp hostnames LIST\n"
    "       slurm-ddp task-counts SPEC\n"
    "       slurm-ddp env [--options=OPTS] [--plugstack=FILE] [--table]\n"
    "       slurm-ddp check-options OPTS\n"
    "       slurm-ddp check-options --site ARG...\n"
    "       slurm-ddp options [--markdown|--names]   (the same table as srun --ddp=help)\n"
    "       slurm-ddp check [--json] [--nccl] [--timeout=SECONDS]   (as srun --ddp slurm-ddp "
    "check)\n"
    "       slurm-ddp run [--restarts=N] -N COUNT [srun options] -- program [args...]\n"
    "       slurm-ddp stacks [--timeout=SECONDS] JOBID[.STEPID]   (every rank's stack, grouped)\n"
    "       slurm-ddp --version\n"
    "Expands Slurm host lists and shows the DDP environment that `srun --ddp` gives a task.\n";

int bad_input(const sddp::Error& e) {
    std::cerr << "slurm-ddp: error: " << e.message << "\n";
    return 1;
}

int usage_error(const std::string& why) {
    std::cerr << "slurm-ddp: " << why << "\n" << kUsage;
    return 2;
}

int cmd_hostnames(const std::vector<std::string>& args) {
    if (args.size() != 1) return usage_error("hostnames takes one host list");
    auto hosts = sddp::expand_hostlist(args[0]);
    if (!hosts) return bad_input(hosts.error());
    std::string out;
    for (const auto& h : *hosts) out += h + "\n";
    if (std::fwrite(out.data(), 1, out.size(), stdout) != out.size()) {
        std::cerr << "slurm-ddp: cannot write to stdout\n";
        return 1;
    }
    return 0;
}

int cmd_task_counts(const std::vector<std::string>& args) {
    if (args.size() != 1) return usage_error("task-counts takes one specification");
    auto counts = sddp::expand_task_counts(args[0]);
    if (!counts) return bad_input(counts.error());
    for (auto c : *counts) std::cout << c << "\n";
    return 0;
}

int cmd_check_options(const std::vector<std::string>& args) {
    if (!args.empty() && args[0] == "--site") {
        auto site = sddp::parse_site_arguments({args.begin() + 1, args.end()});
        if (!site) return bad_input(site.error());
        std::cout << "plugin arguments OK: " << sddp::describe_options(*site) << "\n";
        return 0;
    }
    if (args.size() != 1) return usage_error("check-options takes one --ddp value");
    auto opts = sddp::parse_user_options(args[0]);
    if (!opts) return bad_input(opts.error());
    std::cout << "--ddp options OK: " << sddp::describe_options(*opts) << "\n";
    return 0;
}

int cmd_options(const std::vector<std::string>& args) {
    auto format = sddp::HelpFormat::text;
    if (args.size() == 1 && args[0] == "--markdown") {
        format = sddp::HelpFormat::markdown;
    } else if (args.size() == 1 && args[0] == "--names") {
        format = sddp::HelpFormat::names;
    } else if (!args.empty()) {
        return usage_error("options takes --markdown or --names");
    }
    std::cout << sddp::format_options_help(format);
    return 0;
}

}  // namespace

namespace {
int run(int argc, char** argv) {
    if (argc < 2) return usage_error("missing command");
    const std::string cmd = argv[1];
    const std::vector<std::string> args(argv + 2, argv + argc);
    if (cmd == "-h" || cmd == "--help" || cmd == "help") {
        std::cout << kUsage;
        return 0;
    }
    if (cmd == "--version" || cmd == "version") {
        std::cout << sddp::tools::version_report();
        return 0;
    }
    if (cmd == "hostnames") return cmd_hostnames(args);
    if (cmd == "task-counts") return cmd_task_counts(args);
    if (cmd == "env") return sddp::cli::run_env_command(args);
    if (cmd == "check-options") return cmd_check_options(args);
    if (cmd == "options") return cmd_options(args);
    if (cmd == "check") return sddp::check::run_check_command(args);
    if (cmd == "run") return sddp::cli::run_run_command(args);
    if (cmd == "stacks") return sddp::stacks::run_stacks_command(args);
    return usage_error("unknown command '" + cmd + "'");
}
}  // namespace

int main(int argc, char** argv) {
    try {
        return run(argc, argv);
    } catch (const std::exception& e) {  // out of memory: say so instead of aborting
        std::cerr << "slurm-ddp: error: " << e.what() << "\n";
        return 1;
    }
}
