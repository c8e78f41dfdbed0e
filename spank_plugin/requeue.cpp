// SPDX-License-Identifier: Apache-2.0
#include "requeue.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>

#include "core/task/requeue_marker.hpp"
#include "plugin_log.hpp"
#include "requeue_markers.hpp"
#include "step_watch.hpp"

#include "slurm_api.hpp"

namespace sddp::plugin {
namespace {

// The marker of this run, once this slurmstepd wrote it (shared with contain_spank's clones).
std::optional<RequeueMarker> g_marker;

std::optional<std::string> step_env(spank_t sp, const char* name) {
    char buf[4096] = {};
    if (spank_getenv(sp, name, buf, sizeof buf) != ESPANK_SUCCESS) return std::nullopt;
    return std::string(buf);
}

// This run of the job on this node. SLURMD_NODENAME and SLURM_RESTART_COUNT are Slurm's: in the
// batch step slurmd sets them; in a step they come through srun, so a user who changes them
// can only keep their own job from requeueing.
std::optional<RequeueMarker> this_run(spank_t sp) {
    std::uint32_t job_id = 0;
    if (spank_get_item(sp, S_JOB_ID, &job_id) != ESPANK_SUCCESS) return std::nullopt;
    const auto node = step_env(sp, "SLURMD_NODENAME");
    if (!node) return std::nullopt;
    const auto restarts = step_env(sp, "SLURM_RESTART_COUNT");
    return RequeueMarker{job_id, restart_count_of(restarts), *node};
}

template <typename StepId>
StepId whole_job(std::uint32_t job_id) {
    StepId id{};
    id.job_id = job_id;
    id.step_id = NO_VAL;
    id.step_het_comp = NO_VAL;
    return id;
}

// slurm_requeue took a job id up to 25.x and a slurm_step_id_t since 26.05. JOB_RUNNING makes
// slurmctld requeue the job only while it runs: one its user cancelled is completing, and the
// request then does nothing.
template <typename RequeueFn>
int requeue_job(RequeueFn requeue, std::uint32_t job_id) {
    const auto only_if_running = static_cast<std::uint32_t>(JOB_RUNNING);
    if constexpr (std::is_invocable_v<RequeueFn, std::uint32_t, std::uint32_t>) {
        return requeue(job_id, only_if_running);
    } else {
        return requeue(whole_job<slurm_step_id_t>(job_id), only_if_running);
    }
}

struct JobNow {
    std::uint32_t state = 0;          // JOB_STATE_BASE bits and flags, as slurmctld has them
    std::uint32_t restart_count = 0;  // counted at once by a requeue
    bool batch = false;               // sbatch's: a batch script will end and read the marker
};

// The job as slurmctld has it now, or nullopt.
template <typename LoadFn>
std::optional<JobNow> job_now(LoadFn load, std::uint32_t job_id) {
    job_info_msg_t* info = nullptr;
    int rc = 0;
    if constexpr (std::is_invocable_v<LoadFn, job_info_msg_t**, std::uint32_t, std::uint16_t>) {
        rc = load(&info, job_id, static_cast<std::uint16_t>(SHOW_ALL));
    } else {
        rc = load(&info, whole_job<slurm_step_id_t>(job_id), static_cast<std::uint16_t>(SHOW_ALL));
    }
    std::optional<JobNow> now;
    if (rc == 0 && info != nullptr && info->record_count > 0)
        now = JobNow{info->job_array[0].job_state, info->job_array[0].restart_cnt,
                     info->job_array[0].batch_flag != 0};
    if (info != nullptr) {
        if (auto* release = SDDP_SLURM_API(slurm_free_job_info_msg)) release(info);
    }
    return now;
}

std::optional<JobNow> job_now(std::uint32_t job_id) {
    auto* load = SDDP_SLURM_API(slurm_load_job);
    return load != nullptr ? job_now(load, job_id) : std::nullopt;
}

}  // namespace

void on_requeue_task_init(const StepOptions& opts) {
    // SLURM_DDP_RESTARTS comes with the rest of the task's environment (core/task/task_env), and
    // the step watch with the step (plugin.cpp).
    if (!opts.requeue || !opts.launcher) return;
    // torchrun & co. die of SIGUSR1 (its default action) and take their workers with them
    // before they save. An ignored signal stays ignored across exec and fork, so the launcher
    // survives; a worker's own handler (signal.signal) replaces the inherited one.
    (void)signal(SIGUSR1, SIG_IGN);
    (void)signal(SIGUSR2, SIG_IGN);
}

void on_requeue_task_exit(spank_t sp, const StepOptions& opts) {
    if (g_marker || !opts.requeue || !checkpoint_signalled()) return;
    const auto run = this_run(sp);
    const auto nodes = step_env(sp, "SLURM_JOB_NODELIST");
    // The batch script runs on the job's first node: a marker anywhere else is never read.
    if (!run || !nodes || !is_first_node_of_job(*nodes, run->node)) return;
    g_marker = *run;
    if (auto st = write_requeue_marker(*run); !st) {
        log_error(st.error().message + "; job " + std::to_string(run->job_id) +
                  " will not be requeued");
    }
}

void on_requeue_step_exit() {
    if (!g_marker) return;
    // A job that no longer runs (cancelled, timed out) will not be requeued, and its batch step
    // may have ended before this step: then nobody else removes the marker. Neither does anyone
    // in a job without a batch script (srun's or salloc's own allocation).
    const auto now = job_now(g_marker->job_id);
    if (!now || ((now->state & JOB_STATE_BASE) == JOB_RUNNING && now->batch)) return;
    (void)take_requeue_marker(*g_marker);
}

bool is_batch_script(spank_t sp) {
    std::uint32_t step_id = 0;
    return spank_get_item(sp, S_JOB_STEPID, &step_id) == ESPANK_SUCCESS &&
           step_id == SLURM_BATCH_SCRIPT;
}

int on_batch_script_exit(spank_t sp) {
    const auto run = this_run(sp);
    if (!run) return 0;
    const auto found = take_requeue_marker(*run);
    if (!found) {
        log_error(found.error().message);
        return 0;
    }
    if (!*found) return 0;
    const std::string job = "job " + std::to_string(run->job_id);
    // A script killed by a signal was ended by Slurm: scancel, the time limit, or a requeue
    // already under way (Lightning's own handler runs `scontrol requeue`).
    int status = 0;
    if (spank_get_item(sp, S_TASK_EXIT_STATUS, &status) == ESPANK_SUCCESS && WIFSIGNALED(status)) {
        log_info("requeue: " + job + " was signalled early, but its script was ended by signal " +
                 std::to_string(WTERMSIG(status)) +
                 " (scancel, time limit or a requeue already under way): not requeued");
        return 0;
    }
    auto* requeue = SDDP_SLURM_API(slurm_requeue);
    if (requeue == nullptr) {
        log_error("requeue: " + job + " was signalled early but cannot be requeued: no " +
                  "slurm_requeue in slurmstepd");
        return 0;
    }
    if (requeue_job(requeue, run->job_id) != 0) {
        const int err = errno;
        if (err == ESLURM_JOB_PENDING) {
            log_info("requeue: " + job + " is pending already (requeued by someone else)");
        } else {
            log_error("requeue: " + job +
                      " was signalled early but cannot be requeued: " + slurm_error_text(err) +
                      " (submit with sbatch --requeue, or ask the site for JobRequeue=1)");
        }
        return 0;
    }
    // slurmctld answers success and does nothing for a job that no longer runs.
    const auto now = job_now(run->job_id);
    if (now && now->restart_count > run->restart_count) {
        log_info("requeue: " + job + " was signalled early (--ddp=requeue); requeued");
    } else if (now) {
        log_info("requeue: " + job + " was signalled early, but it no longer runs (cancelled, " +
                 "or ended by its time limit): not requeued");
    } else {
        log_info("requeue: " + job + " was signalled early; requeue asked for (only while the " +
                 "job still runs)");
    }
    return 0;
}

}  // namespace sddp::plugin
