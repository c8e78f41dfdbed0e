// SPDX-License-Identifier: Apache-2.0
// The SPANK entry points: a dispatcher on spank_context(), nothing else. Each hook hands off to
// the srun or the sbatch/salloc side (local_context.hpp) or to the slurmstepd side
// (slurmstepd.hpp); the plugin's arguments and the --ddp option are read in ddp_option.hpp.
//
// Slurm loads this object into srun, sbatch, salloc, slurmd and every slurmstepd. Each hook:
//   - never throws across the C ABI (a catch-all turns anything into an error return,
//     hook_guard.hpp),
//   - never returns an error for a step that did not ask for --ddp (a failing remote init can
//     drain a node; a failing srun hook would break every user's job),
//   - fails a --ddp step only where the user can see why: in srun/sbatch before launch, or in
//     task_init with the message on the task's stderr.
// Each hook's work is timed from inside (hook_timer.hpp); a --ddp step reports it, see
// log_plugin_time. Steps without --ddp are timed too (a few clock reads) but never hear of it.
#include "ddp_option.hpp"
#include "hook_guard.hpp"
#include "hook_timer.hpp"
#include "local_context.hpp"
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

using sddp::plugin::guarded;
using sddp::plugin::HookTime;
using sddp::plugin::HookTimer;
using sddp::plugin::state;

template <typename F>
int timed(HookTime& into, F&& body) {
    const HookTimer timer(into);
    return body();
}

}  // namespace

extern "C" {

int slurm_spank_init(spank_t sp, int ac, char** av) {
    return guarded("slurm_spank_init", [&] {
        switch (spank_context()) {
            case S_CTX_LOCAL:
            case S_CTX_ALLOCATOR:
                return timed(state().times.init,
                             [&] { return sddp::plugin::read_site_and_register_ddp(sp, ac, av); });
            case S_CTX_REMOTE:
                return timed(state().times.init,
                             [&] { return sddp::plugin::slurmstepd_init(sp, ac, av); });
            default:
                return 0;
        }
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

// srun, after the allocation, just before the launch.
int slurm_spank_local_user_init(spank_t sp, int /*ac*/, char** /*av*/) {
    return guarded("slurm_spank_local_user_init", [&] {
        if (spank_context() != S_CTX_LOCAL) return 0;
        return sddp::plugin::on_srun_user_init(sp);
    });
}

int slurm_spank_user_init(spank_t sp, int /*ac*/, char** /*av*/) {
    return guarded("slurm_spank_user_init", [&] {
        if (spank_context() != S_CTX_REMOTE) return 0;
        return timed(state().times.user_init,
                     [&] { return sddp::plugin::slurmstepd_user_init(sp); });
    });
}

// Not timed here: each task reports its time from inside this hook.
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
