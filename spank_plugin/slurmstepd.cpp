// SPDX-License-Identifier: Apache-2.0
#include "slurmstepd.hpp"

#include <cstdint>
#include <optional>
#include <string>

#include "container_order.hpp"
#include "core/task/task_failure.hpp"
#include "ddp_option.hpp"
#include "ddp_step.hpp"
#include "fail_fast.hpp"
#include "hook_timer.hpp"
#include "plugin_state.hpp"
#include "requeue.hpp"
#include "step_watch.hpp"
#include "task_setup.hpp"

namespace sddp::plugin {

int slurmstepd_init(spank_t sp, int ac, char** av) {
    (void)read_site_and_register_ddp(sp, ac, av);
    // Here, not later: slurmstepd clears the step's SPANK option variables after this hook.
    note_container_order(sp);
    return 0;
}

// Options known, tasks not forked yet: the one decision about the step, and the watch of a step
// that fails fast or requeues (step_watch.hpp), from this process so that it lives as long as
// the step.
int slurmstepd_post_opt(spank_t sp) {
    decide_ddp_step(sp);
    const StepOptions* opts = ddp_step_options();
    if (opts == nullptr) return 0;
    const bool fail_fast = fail_fast_applies(*opts, ddp_asked(state()));
    if (!fail_fast && !opts->requeue) return 0;
    std::uint32_t local_tasks = 0;
    uid_t uid = 0;
    if (spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &local_tasks) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_UID, &uid) != ESPANK_SUCCESS)
        return 0;
    (void)start_step_watch(local_tasks, uid);
    return 0;
}

int slurmstepd_user_init(spank_t sp) {
    if (ddp_step() != nullptr) remember_step_env(sp);
    return 0;
}

int slurmstepd_task_init(spank_t sp) {
    auto& s = state();
    const DdpStep* step = ddp_step();
    std::optional<std::uint32_t> rank;  // set only when this task was set up for --ddp
    HookTimer timer(s.times.task_init);
    // The batch script, extern and interactive steps are never set up, even with --ddp; an
    // interactive step still carries the secret srun made for it.
    const int rc = step != nullptr ? setup_task(sp, step->options, &rank) : stay_out(sp);
    timer.stop();  // before the time is logged
    if (rc != 0 || !rank) return rc;
    std::uint32_t local_id = 1;
    (void)spank_get_item(sp, S_TASK_ID, &local_id);
    if (local_id == 0) start_watcher();
    if (const StepOptions* opts = ddp_step_options()) on_requeue_task_init(*opts);
    // init, option and user_init ran once in this node's slurmstepd before the tasks were
    // forked (every task reports the same values); task_init ran in this task alone.
    log_plugin_time("task " + std::to_string(*rank),
                    format_hook_times({{"init", s.times.init},
                                       {"option", s.times.option},
                                       {"user_init", s.times.user_init},
                                       {"task_init", s.times.task_init}}));
    return 0;
}

// As each local task ends: a failed rank ends the step (fail_fast.hpp), an early signal is
// recorded for requeue, and the end of the batch script requeues a job signalled early under
// --ddp=requeue (requeue.hpp). Under contain_spank Slurm runs this hook in a clone that shares
// slurmstepd's memory.
int slurmstepd_task_exit(spank_t sp) {
    if (is_batch_script(sp)) return on_batch_script_exit(sp);
    const StepOptions* opts = ddp_step_options();
    if (opts == nullptr) return 0;
    on_requeue_task_exit(sp, *opts);
    on_fail_fast_task_exit(sp, *opts);
    std::uint32_t local_id = 0;
    if (spank_get_item(sp, S_TASK_ID, &local_id) == ESPANK_SUCCESS) note_task_end(local_id);
    return 0;
}

// Once per node when the step ends: stop the step watch (a fail-fast kill request still waiting
// goes out first; no plugin thread may outlive the plugin), and remove the step's --ddp=hostfile
// file.
int slurmstepd_exit(spank_t sp) {
    stop_step_watch();
    on_requeue_step_exit();
    const StepOptions* opts = ddp_step_options();
    if (opts != nullptr && opts->hostfile) remove_hostfile_of_step(sp, ddp_step()->step_id);
    return 0;
}

}  // namespace sddp::plugin
