// SPDX-License-Identifier: Apache-2.0
// The SPANK entry points: a dispatcher on spank_context(), nothing else.
//
// Slurm loads this object into srun, sbatch, salloc, slurmd and every slurmstepd. Each hook:
//   - never throws across the C ABI (a catch-all turns anything into an error return),
//   - never returns an error for a step that did not ask for --ddp (a failing remote init can
//     drain a node; a failing srun hook would break every user's job),
//   - fails a --ddp step only where the user can see why: in srun/sbatch before launch, or in
//     task_init with the message on the task's stderr.
// Each hook's work is timed from inside (hook_timer.hpp); a --ddp step reports it, see
// log_plugin_time. Steps without --ddp are timed too (a few clock reads) but never hear of it.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/options/options.hpp"
#include "core/options/options_help.hpp"
#include "hook_timer.hpp"
#include "local_context.hpp"
#include "plugin_log.hpp"
#include "plugin_state.hpp"
#include "slurmstepd.hpp"
#include "spank_api.hpp"

extern "C" {
// SPANK_PLUGIN defines const objects; in C++ those have internal linkage unless declared extern.
extern const char plugin_name[];
extern const char plugin_type[];
extern const unsigned int plugin_version;
extern const unsigned int spank_plugin_version;
SPANK_PLUGIN(ddp, 1);
}

namespace {

using sddp::plugin::format_hook_times;
using sddp::plugin::HookTime;
using sddp::plugin::HookTimer;
using sddp::plugin::log_error;
using sddp::plugin::state;

template <typename F>
int guarded(const char* hook, F&& body) noexcept {
    sddp::plugin::use_slurm_log();  // every hook, whatever process and context Slurm loaded us in
    try {
        return body();
    } catch (...) {
        // Out of memory or a bug: never let it unwind into Slurm. Fail only a --ddp step.
        try {
            log_error(std::string("internal error in ") + hook);
        } catch (...) {
        }
        return sddp::plugin::ddp_requested(state()) ? -1 : 0;
    }
}

// The timer stops before the caller logs what it measured.
template <typename F>
int timed(HookTime& into, F&& body) {
    const HookTimer timer(into);
    return body();
}

// `--ddp=help` in srun, sbatch or salloc: the option table on stdout, then exit 0, as Slurm's own
// `--cpu-bind=help` does. The only place the plugin prints to stdout or exits, and only in the
// user's command (remote == 0); in slurmstepd "help" is an invalid value like any other.
void print_help_and_exit() {
    const std::string text = sddp::format_options_help(sddp::HelpFormat::text);
    (void)!std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
    std::exit(0);
}

int on_option(int /*val*/, const char* optarg, int remote) noexcept {
    return guarded("the --ddp option", [&] {
        if (!remote && optarg != nullptr && sddp::is_help_request(optarg)) print_help_and_exit();
        auto& s = state();
        const HookTimer timer(s.times.option);
        s.user_option_given = true;
        s.user_text = optarg != nullptr ? optarg : "";
        auto parsed = sddp::parse_user_options(s.user_text);
        if (parsed) {
            s.user = std::move(*parsed);
            s.user_error.reset();
            return 0;
        }
        s.user_error = parsed.take_error();
        if (remote) return 0;  // reported in task_init, where the user sees it
        log_error(s.user_error->message);
        return -1;  // srun/sbatch refuse to launch
    });
}

struct spank_option kDdpOption = {
    const_cast<char*>("ddp"),
    const_cast<char*>("[opts]"),
    const_cast<char*>("Run the step as a distributed data-parallel job: sets RANK, WORLD_SIZE, "
                      "MASTER_ADDR, MASTER_PORT, LOCAL_RANK... per task (opts: port=N, ports=K, "
                      "gpu-bind=local|single|closest|none, launcher, nproc=N, torchelastic, "
                      "rank-order=block|node, net-hints, jax, tf, hostfile, debug[=DIR], "
                      "verbose, off; --ddp=help lists them all)"),
    2,  // optional argument: --ddp or --ddp=opts
    0,
    on_option,
};

}  // namespace

extern "C" {

int slurm_spank_init(spank_t sp, int ac, char** av) {
    return guarded("slurm_spank_init", [&] {
        const spank_context_t ctx = spank_context();
        if (ctx != S_CTX_LOCAL && ctx != S_CTX_ALLOCATOR && ctx != S_CTX_REMOTE) return 0;

        auto& s = state();
        const HookTimer timer(s.times.init);
        std::vector<std::string> args;
        args.reserve(static_cast<std::size_t>(ac > 0 ? ac : 0));
        for (int i = 0; i < ac; ++i) args.emplace_back(av[i] != nullptr ? av[i] : "");
        auto site = sddp::parse_site_arguments(args);
        if (site) {
            s.site = std::move(*site);
        } else {
            s.site_error = site.take_error();
        }
        if (spank_option_register(sp, &kDdpOption) != ESPANK_SUCCESS) {
            log_error("cannot register the --ddp option");
        }
        if (ctx == S_CTX_REMOTE) sddp::plugin::slurmstepd_init(sp);
        return 0;  // never fail init: it would break steps that do not use --ddp
    });
}

int slurm_spank_init_post_opt(spank_t sp, int /*ac*/, char** /*av*/) {
    return guarded("slurm_spank_init_post_opt", [&] {
        switch (spank_context()) {
            case S_CTX_LOCAL:
                return timed(state().times.post_opt,
                             [&] { return sddp::plugin::on_srun_post_opt(sp); });
            case S_CTX_ALLOCATOR:
                return sddp::plugin::on_allocator_post_opt(sp);
            case S_CTX_REMOTE:
                return sddp::plugin::slurmstepd_post_opt(sp);
            default:
                return 0;
        }
    });
}

// srun, after the allocation, just before the launch: only to report srun's own time. Not in
// init_post_opt: srun applies -v to its log level after that hook, so the line would never show.
int slurm_spank_local_user_init(spank_t /*sp*/, int /*ac*/, char** /*av*/) {
    return guarded("slurm_spank_local_user_init", [&] {
        if (spank_context() != S_CTX_LOCAL) return 0;
        const auto& s = state();
        if (sddp::plugin::ddp_requested(s)) {
            sddp::plugin::log_plugin_time("srun",
                                          format_hook_times({{"init", s.times.init},
                                                             {"option", s.times.option},
                                                             {"init_post_opt", s.times.post_opt}}));
        }
        return 0;
    });
}

int slurm_spank_user_init(spank_t sp, int /*ac*/, char** /*av*/) {
    return guarded("slurm_spank_user_init", [&] {
        if (spank_context() != S_CTX_REMOTE) return 0;
        return timed(state().times.user_init,
                     [&] { return sddp::plugin::slurmstepd_user_init(sp); });
    });
}

int slurm_spank_task_init(spank_t sp, int /*ac*/, char** /*av*/) {
    return guarded("slurm_spank_task_init", [&] {
        if (spank_context() != S_CTX_REMOTE) return 0;
        return sddp::plugin::slurmstepd_task_init(sp);
    });
}

int slurm_spank_task_exit(spank_t sp, int /*ac*/, char** /*av*/) {
    return guarded("slurm_spank_task_exit", [&] {
        if (spank_context() != S_CTX_REMOTE) return 0;
        return sddp::plugin::slurmstepd_task_exit(sp);
    });
}

int slurm_spank_exit(spank_t sp, int /*ac*/, char** /*av*/) {
    return guarded("slurm_spank_exit", [&] {
        if (spank_context() != S_CTX_REMOTE) return 0;
        return sddp::plugin::slurmstepd_exit(sp);
    });
}

}  // extern "C"
