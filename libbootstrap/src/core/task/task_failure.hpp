// SPDX-License-Identifier: Apache-2.0
// Fail fast: what one task's end means for the rest of its step.
//
// A distributed step is only useful while all of its ranks live: once one fails, the others
// block in a collective or the rendezvous until a timeout. So a task that exits non-zero or dies
// of a signal ends the step. The exceptions are the signals through which Slurm or the user ask
// a whole step to end or to checkpoint (every task receives those, and a rank still saving its
// checkpoint must not be cut short), and SIGKILL, which is also how a step is ended: the step is
// still ended, but without a report, since a task killed with the step is no news; srun names a
// task that was killed first by itself.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/base/env_lookup.hpp"
#include "core/options/options.hpp"

namespace sddp {

enum class FailFastAction {
    none,           // the task succeeded, or the whole step was asked to end or checkpoint
    end_step,       // end the step, report at verbose level only (SIGKILL)
    report_and_end  // end the step and tell the user which rank failed and how
};

struct TaskEnd {
    FailFastAction action = FailFastAction::none;
    std::string how;  // "exit status 7", "signal 11 (SIGSEGV)"
};

// Whether a failed task ends the step: not under keep-going, and in a step that only the site
// default (default=on) gave --ddp, only where the site asked for that too (fail-fast=all), so
// that default=on never changes how an ordinary step (`srun -n64 ./sweep`) ends.
bool fail_fast_applies(const StepOptions& opts, bool user_asked);

// From a wait status as slurmstepd reports it (S_TASK_EXIT_STATUS).
TaskEnd classify_task_end(int wait_status);

// Signals Slurm sends to every task of a step to end it or to ask for a checkpoint (scancel, the
// time limit, --signal, preemption, srun's Ctrl-C): TERM, INT, HUP, USR1, USR2.
bool is_step_wide_signal(int sig);

// The lowest-numbered step-wide signal in a set where bit (N - 1) stands for signal N, as in the
// SigPnd/ShdPnd masks of /proc/PID/status; 0 when there is none.
int first_step_wide_signal(std::uint64_t signal_mask);

// SigPnd | ShdPnd of /proc/PID/status text: the signals waiting for that process. nullopt when
// the text holds neither line (not a status file).
std::optional<std::uint64_t> pending_signal_mask(std::string_view proc_status);

// "SIGTERM", or "signal N" where the C library has no name for it.
std::string signal_label(int sig);

// A task that failed after its step got the step-wide signal `signal`: an end that belongs to
// the shutdown Slurm or the user asked for (a rank that saved and exits 1, torchrun's exit 1 on
// SIGTERM), said at verbose level instead of the failure report.
std::string shutdown_end_message(std::uint32_t rank, std::string_view node, const TaskEnd& end,
                                 int signal, std::uint32_t job_id, std::uint32_t step_id);

// The line srun shows for the first failure a node sees.
std::string fail_fast_message(std::uint32_t rank, std::string_view node, const TaskEnd& end,
                              std::uint32_t job_id, std::uint32_t step_id);

// SLURM_DDP_RESTARTS for a task. `slurm-ddp run` exports its count of runs with the job id it
// counted for; the task keeps that count only when the id is this task's job and the count is a
// number, since a value inherited from another job (a job submitted from a job) describes that
// job. Otherwise the job's own SLURM_RESTART_COUNT (requeues) decides.
std::string restarts_value(std::optional<std::string_view> run_count,
                           std::optional<std::string_view> run_job,
                           std::optional<std::string_view> job_id, std::uint32_t restart_count);

// SLURM_DDP_RESTARTS for every --ddp task, from the task's own variables (Slurm exports
// SLURM_RESTART_COUNT to a requeued job's script and srun passes it on; unset means 0).
EnvAssignment restarts_assignment(const EnvLookup& env);

}  // namespace sddp
