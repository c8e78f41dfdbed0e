// SPDX-License-Identifier: Apache-2.0
// What the plugin knows in one process (srun, sbatch/salloc or one slurmstepd).
//
// SPANK gives no per-call user data, so the state is one static object; every process that loads
// the plugin has its own copy. Errors are kept, not acted on, until it is known whether the step
// asked for --ddp: a broken site configuration must never disturb steps that did not.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "core/base/result.hpp"
#include "core/options/options.hpp"
#include "hook_timer.hpp"

namespace sddp::plugin {

struct PluginState {
    DdpOptions site;                  // plugin arguments from plugstack.conf
    std::optional<Error> site_error;  // invalid plugin arguments
    bool user_option_given = false;   // --ddp[=...] seen (command line or #SBATCH export)
    DdpOptions user;                  // parsed --ddp value
    std::optional<Error> user_error;  // invalid --ddp value
    std::string user_text;            // the --ddp value as typed, for messages
    // The step's GPU lists on this node before Slurm narrows them per task (user_init sees the
    // step environment; the tasks are forked afterwards and inherit this memory).
    std::map<std::string, std::string, std::less<>> step_gpu_env;
    // MASTER_ADDR/MASTER_PORT as srun exported them (user_init, before any plugin's task_init).
    // A value that appears only by task_init came from another plugin, e.g. a container hook.
    bool step_env_seen = false;
    std::map<std::string, std::string, std::less<>> step_master_env;
    // Time spent in each hook so far. slurmstepd's tasks are forked after user_init and inherit
    // the init/option/user_init times, so each task can report them with its own task_init.
    HookTimes times;
};

PluginState& state();

// Whether this step runs with --ddp: asked for, or on by site default and not turned off.
bool ddp_requested(const PluginState& s);

// Whether the user asked for --ddp (not only the site default): only such a step may fail.
bool ddp_asked(const PluginState& s);

// Site options merged with the user's, or the first configuration error.
Result<StepOptions> effective_options(const PluginState& s);

inline constexpr const char* kPluginName = "slurm-ddp";

}  // namespace sddp::plugin
