// SPDX-License-Identifier: Apache-2.0
#include "local_context.hpp"

#include <cstdlib>
#include <string>

#include "core/contract/contract.hpp"
#include "hook_timer.hpp"
#include "os/random_bytes.hpp"
#include "plugin_log.hpp"
#include "plugin_state.hpp"

namespace sddp::plugin {
namespace {

// The step's secret, as the tasks read it (core/contract/contract).
std::optional<std::string> make_secret() {
    auto raw = random_bytes(contract::kSecretBytes);
    if (!raw) return std::nullopt;
    return contract::encode_secret(*raw);
}

// Shared by srun and sbatch: the options must be valid before anything is launched.
bool options_valid() {
    const auto& s = state();
    if (!ddp_requested(s)) {
        if (s.site_error) {
            log_verbose("ignoring invalid plugin arguments for a step without --ddp: " +
                        s.site_error->message);
        }
        return true;
    }
    auto opts = effective_options(s);
    if (!opts) {
        // A bad --ddp value was already reported by the option callback; say it once.
        if (!s.user_error) log_error(opts.error().message);
        return false;
    }
    return true;
}

// Only a step that asked for --ddp may fail for want of a secret. Any other step launches
// without one; on a node whose site default would turn DDP on, the task finds no secret and the
// plugin leaves it alone (task_setup.cpp).
int no_secret(const std::string& why) {
    if (!ddp_asked(state())) {
        log_verbose(why +
                    "; the step is launched without a secret, so no site default gives it DDP");
        return 0;
    }
    log_error(why + "; the rendezvous would be unauthenticated, so the step is not launched");
    return -1;
}

}  // namespace

int on_srun_post_opt(spank_t /*sp*/) {
    if (!options_valid()) return -1;
    // The compute nodes decide again whether the step gets --ddp, and their plugstack line
    // (default=on) may differ from this host's: make the secret for every step the user did not
    // turn off. task_init drops it from steps that end up without --ddp.
    const PluginState& s = state();
    if (!ddp_requested(s) && s.user_option_given) return 0;
    auto secret = make_secret();
    // srun's environment is the tasks' environment: the secret reaches every task of this step
    // and no other step (each srun makes its own). spank_setenv works only in remote context.
    if (secret && ::setenv(contract::kSecretVar, secret->c_str(), 1) == 0) return 0;
    return no_secret(secret ? std::string("cannot set ") + contract::kSecretVar +
                                  " in srun's environment"
                            : std::string("cannot read random bytes for the step secret "
                                          "(getrandom failed)"));
}

// Not in init_post_opt: srun applies -v to its log level after that hook, so the line would
// never show.
int on_srun_user_init(spank_t /*sp*/) {
    const PluginState& s = state();
    if (ddp_requested(s)) {
        log_plugin_time("srun", format_hook_times({{"init", s.times.init},
                                                   {"option", s.times.option},
                                                   {"init_post_opt", s.times.post_opt}}));
    }
    return 0;
}

int on_allocator_post_opt(spank_t /*sp*/) {
    return options_valid() ? 0 : -1;
}

}  // namespace sddp::plugin
