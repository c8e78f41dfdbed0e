// SPDX-License-Identifier: Apache-2.0
#include "core/task/task_failure.hpp"

#include <csignal>
#include <cstdint>
#include <cstring>

#include "core/base/numbers.hpp"
#include "core/options/contract.hpp"

namespace sddp {
namespace {

// Linux's wait status layout (<sys/wait.h>'s macros, spelled out: the core makes no system
// calls): low 7 bits the signal (0: exited, 0x7f: stopped), bits 8-15 the exit code.
bool exited(int status) {
    return (status & 0x7f) == 0;
}
int exit_code(int status) {
    return (status >> 8) & 0xff;
}
bool signaled(int status) {
    return (status & 0x7f) != 0 && (status & 0x7f) != 0x7f;
}
int term_signal(int status) {
    return status & 0x7f;
}

std::string signal_name(int sig) {
    // sigabbrev_np is glibc-only (2.32); keep the number alone elsewhere.
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
    if (const char* abbrev = sigabbrev_np(sig)) return std::string(" (SIG") + abbrev + ")";
#endif
    return "";
}

// Signals Slurm sends to every task of a step (scancel, time limit, --signal, preemption, srun's
// Ctrl-C): the other ranks got the same one and are ending or saving by themselves.
bool is_step_wide_signal(int sig) {
    return sig == SIGTERM || sig == SIGINT || sig == SIGHUP || sig == SIGUSR1 || sig == SIGUSR2 ||
           sig == SIGCONT;
}

}  // namespace

TaskEnd classify_task_end(int wait_status) {
    if (exited(wait_status)) {
        const int code = exit_code(wait_status);
        if (code == 0) return {};
        return {FailFastAction::report_and_end, "exit status " + std::to_string(code)};
    }
    if (signaled(wait_status)) {
        const int sig = term_signal(wait_status);
        TaskEnd end{FailFastAction::report_and_end,
                    "signal " + std::to_string(sig) + signal_name(sig)};
        if (is_step_wide_signal(sig)) end.action = FailFastAction::none;
        if (sig == SIGKILL) end.action = FailFastAction::end_step;
        return end;
    }
    return {};  // stopped or continued: not an end
}

std::string fail_fast_message(std::uint32_t rank, std::string_view node, const TaskEnd& end,
                              std::uint32_t job_id, std::uint32_t step_id) {
    return "rank " + std::to_string(rank) + " on " + std::string(node) +
           (end.how.rfind("exit", 0) == 0 ? " ended with " : " was killed by ") + end.how +
           "; ending the other ranks of step " + std::to_string(job_id) + "." +
           std::to_string(step_id) + " (--ddp=keep-going keeps them running)";
}

std::string restarts_value(std::optional<std::string_view> run_count,
                           std::optional<std::string_view> run_job,
                           std::optional<std::string_view> job_id, std::uint32_t restart_count) {
    if (run_count && run_job && job_id && !job_id->empty() && *run_job == *job_id) {
        if (const auto n = parse_decimal(*run_count, 1000000)) return std::to_string(*n);
    }
    return std::to_string(restart_count);
}

EnvAssignment restarts_assignment(const EnvLookup& env) {
    std::uint32_t count = 0;
    if (const auto v = env("SLURM_RESTART_COUNT")) {
        if (const auto n = parse_decimal(*v, 1000000)) count = static_cast<std::uint32_t>(*n);
    }
    // Overwritten: a value exported from another job (one submitted from inside a job) would
    // describe that job; restarts_value keeps only what `slurm-ddp run` set for this one.
    return {contract::kRestartsVar,
            restarts_value(env(contract::kRestartsVar), env(contract::kRestartsJobVar),
                           env("SLURM_JOB_ID"), count),
            false};
}

}  // namespace sddp
