// SPDX-License-Identifier: Apache-2.0
#include "env/env_command.hpp"

#include <glob.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <iostream>
#include <optional>

#include "core/options/options.hpp"
#include "core/slurm/step_facts.hpp"
#include "core/task/task_env.hpp"
#include "env/job_gpus.hpp"
#include "os/host_files.hpp"
#include "os/plugstack_file.hpp"
#include "os/process_env.hpp"
#include "topology/task_host_facts.hpp"

namespace sddp::cli {
namespace {

int bad_input(const std::string& message) {
    std::cerr << "slurm-ddp: error: " << message << "\n";
    return 1;
}

}  // namespace

int run_env_command(const std::vector<std::string>& args) {
    std::string options;
    std::optional<std::string> plugstack;
    bool table = false;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a.rfind("--options=", 0) == 0) {
            options = a.substr(10);
        } else if (a.rfind("--plugstack=", 0) == 0) {
            plugstack = a.substr(12);
        } else if (a == "--plugstack" && i + 1 < args.size()) {
            plugstack = args[++i];
        } else if (a == "--table") {
            table = true;
        } else {
            std::cerr << "slurm-ddp: env: unknown argument '" << a << "'\n";
            return 2;
        }
    }
    const EnvLookup env = process_env();
    std::string why;
    std::string found = "--plugstack";
    const std::string path = plugstack ? *plugstack : site_plugstack_path(env, &found);
    auto site_args = plugstack_plugin_arguments(path, &why);
    if (!site_args) {
        // A named file must work; Slurm's may simply not mention the plugin (a login node
        // without it): then the printout shows the built-in defaults and says so.
        if (plugstack) return bad_input(why + " (--plugstack)");
        std::cerr << "slurm-ddp: note: " << why << " (" << found
                  << "); site defaults not applied (name the file with --plugstack=FILE)\n";
    }
    auto site = parse_site_arguments(site_args.value_or(std::vector<std::string>{}));
    if (!site) return bad_input(site.error().message);
    auto user = parse_user_options(options);
    if (!user) return bad_input(user.error().message);
    const StepOptions opts = merge_options(*site, *user);

    auto facts = read_step_facts(env);
    if (!facts) return bad_input(facts.error().message);
    // A running task cannot see its step's GPU lists before Slurm narrowed them: rebuilt from
    // the controller's record of the job where that says which they are, so that the CLI widens
    // them as the plugin does; otherwise the task's own lists are shown.
    TaskHostFacts host =
        gather_task_host_facts(env, *facts, step_gpu_env_from_job(env, std::chrono::seconds(3)));
    host.uid = static_cast<std::uint32_t>(::getuid());  // the task runs as the job's user
    auto task = derive_task_env(env, opts, *facts, host, host_lookups(),
                                table ? TableWanted::always : TableWanted::never);
    if (!task) return bad_input(task.error().message);
    for (const auto& v : task->vars) {
        // What the plugin leaves alone (a value the user exported) is not what it sets.
        if (v.keep_existing && env(v.name)) continue;
        std::cout << v.name << "=" << v.value << "\n";
    }
    if (table) std::cout << task->table;
    return 0;
}

}  // namespace sddp::cli
