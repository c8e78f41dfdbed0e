// SPDX-License-Identifier: Apache-2.0
#include "fail_fast.hpp"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <string>
#include <thread>
#include <type_traits>

#include "core/task/task_failure.hpp"
#include "os/host_name.hpp"
#include "plugin_log.hpp"
#include "plugin_state.hpp"
#include "step_watch.hpp"

#include "slurm_api.hpp"

namespace sddp::plugin {
namespace {

// Long enough for slurmstepd to report the failed task to srun (it waits 100 ms for more tasks
// to end first), short against the 10 s in which the other ranks must be gone.
constexpr auto kKillDelay = std::chrono::milliseconds(500);
// How long a failed task's report waits for the watcher to say the step was signalled: a rank
// that exits on the step's SIGTERM can end before the watcher's note about it arrives.
constexpr auto kSignalGrace = std::chrono::milliseconds(100);

// This slurmstepd asked for the step to end already. Shared with the clones Slurm runs hooks in
// under contain_spank (they share this memory).
bool g_acted = false;

// slurm_kill_job_step took (job, step, signal) up to 23.x and (slurm_step_id_t*, signal, flags)
// since; the plugin is built against one Slurm's headers, so pick the form that compiles.
template <typename KillFn>
int kill_step(KillFn kill, std::uint32_t job_id, std::uint32_t step_id) {
    if constexpr (std::is_invocable_v<KillFn, std::uint32_t, std::uint32_t, std::uint16_t>) {
        return kill(job_id, step_id, static_cast<std::uint16_t>(SIGKILL));
    } else {
        slurm_step_id_t id{};
        id.job_id = job_id;
        id.step_id = step_id;
        id.step_het_comp = NO_VAL;
        return kill(&id, static_cast<std::uint16_t>(SIGKILL), static_cast<std::uint16_t>(0));
    }
}

std::string node_name(spank_t sp) {
    char buf[256] = {};
    if (spank_getenv(sp, "SLURMD_NODENAME", buf, sizeof buf) == ESPANK_SUCCESS && buf[0] != '\0')
        return buf;
    return local_host_name().value_or("?");
}

// On the watch thread, kKillDelay after the failure.
void end_step(std::uint32_t job_id, std::uint32_t step_id) {
    const std::string step = std::to_string(job_id) + "." + std::to_string(step_id);
    if (const int sig = step_signal(); sig != 0) {
        log_verbose("fail-fast: step " + step + " got " + signal_label(sig) +
                    " meanwhile: it is shutting down, not ended by fail-fast");
        return;
    }
    if (watcher_gone()) {
        log_info("fail-fast: step " + step + " is being killed already: no request sent");
        return;
    }
    auto* kill = SDDP_SLURM_API(slurm_kill_job_step);
    if (kill == nullptr) {
        log_error("fail-fast: cannot end step " + step +
                  ": this Slurm process exports no slurm_kill_job_step");
        return;
    }
    if (kill_step(kill, job_id, step_id) == 0) {
        // Info, one line per node of a failed step: the admin's record of who ended a step.
        log_info("fail-fast: asked slurmctld to end step " + step);
    } else {
        // Usually the step ended already (another node asked first, or it finished).
        const int err = errno;
        log_verbose("fail-fast: could not end step " + step + ": " + slurm_error_text(err));
    }
}

void end_step_later(std::uint32_t job_id, std::uint32_t step_id) {
    if (run_later(kKillDelay, [job_id, step_id] { end_step(job_id, step_id); })) return;
    // No watch thread on this node: the hook waits and asks itself.
    std::this_thread::sleep_for(kKillDelay);
    end_step(job_id, step_id);
}

}  // namespace

void on_fail_fast_task_exit(spank_t sp, const StepOptions& opts) {
    if (g_acted || !fail_fast_applies(opts, ddp_asked(state()))) return;
    std::uint32_t step_id = 0;
    std::uint32_t job_id = 0;
    if (spank_get_item(sp, S_JOB_STEPID, &step_id) != ESPANK_SUCCESS) return;

    int status = 0;
    if (spank_get_item(sp, S_TASK_EXIT_STATUS, &status) != ESPANK_SUCCESS) return;
    const TaskEnd end = classify_task_end(status);
    if (end.action == FailFastAction::none) return;
    if (spank_get_item(sp, S_JOB_ID, &job_id) != ESPANK_SUCCESS) return;
    std::uint32_t rank = 0;
    (void)spank_get_item(sp, S_TASK_GLOBAL_ID, &rank);

    if (const int sig = step_signal_within(kSignalGrace); sig != 0) {
        log_verbose(shutdown_end_message(rank, node_name(sp), end, sig, job_id, step_id));
        return;
    }
    g_acted = true;
    const std::string message = fail_fast_message(rank, node_name(sp), end, job_id, step_id);
    // slurmstepd's errors reach srun's stderr ("slurmstepd: error: ..."), as its own
    // "*** STEP CANCELLED ***" lines do.
    if (end.action == FailFastAction::report_and_end) {
        log_error(message);
    } else {
        log_verbose(message);
    }
    end_step_later(job_id, step_id);
}

}  // namespace sddp::plugin
