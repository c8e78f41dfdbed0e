// SPDX-License-Identifier: Apache-2.0
#include "core/task/task_failure.hpp"

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <cstring>

#include "core/base/numbers.hpp"
#include "core/contract/contract.hpp"

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

// "TERM", or nullptr. sigabbrev_np is glibc-only (2.32).
const char* signal_abbrev(int sig) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
    return sigabbrev_np(sig);
#else
    (void)sig;
    return nullptr;
#endif
}

std::string signal_name(int sig) {
    if (const char* abbrev = signal_abbrev(sig)) return std::string(" (SIG") + abbrev + ")";
    return "";
}

// One "Name:\tHEX" line of /proc/PID/status, nullopt when absent or malformed.
std::optional<std::uint64_t> status_mask(std::string_view text, std::string_view name) {
    std::size_t at = 0;
    while (at < text.size()) {
        const auto end = std::min(text.find('\n', at), text.size());
        std::string_view line = text.substr(at, end - at);
        at = end + 1;
        if (line.size() <= name.size() || line.substr(0, name.size()) != name ||
            line[name.size()] != ':')
            continue;
        line.remove_prefix(name.size() + 1);
        while (!line.empty() && (line.front() == '\t' || line.front() == ' '))
            line.remove_prefix(1);
        if (line.empty() || line.size() > 16) return std::nullopt;
        std::uint64_t mask = 0;
        for (const char c : line) {
            int digit = -1;
            if (c >= '0' && c <= '9') digit = c - '0';
            if (c >= 'a' && c <= 'f') digit = c - 'a' + 10;
            if (digit < 0) return std::nullopt;
            mask = (mask << 4) | static_cast<std::uint64_t>(digit);
        }
        return mask;
    }
    return std::nullopt;
}

}  // namespace

// The other ranks got the same signal and are ending or saving by themselves. SIGCONT too: Slurm
// sends it ahead of SIGTERM, and a task that dies of it was stopped and killed by hand.
bool is_step_wide_signal(int sig) {
    return sig == SIGTERM || sig == SIGINT || sig == SIGHUP || sig == SIGUSR1 || sig == SIGUSR2;
}

int first_step_wide_signal(std::uint64_t signal_mask) {
    for (int sig = 1; sig <= 64; ++sig) {
        if (((signal_mask >> (sig - 1)) & 1u) != 0 && is_step_wide_signal(sig)) return sig;
    }
    return 0;
}

std::optional<std::uint64_t> pending_signal_mask(std::string_view proc_status) {
    const auto thread = status_mask(proc_status, "SigPnd");
    const auto shared = status_mask(proc_status, "ShdPnd");
    if (!thread && !shared) return std::nullopt;
    return thread.value_or(0) | shared.value_or(0);
}

std::string signal_label(int sig) {
    if (const char* abbrev = signal_abbrev(sig)) return std::string("SIG") + abbrev;
    return "signal " + std::to_string(sig);
}

std::string shutdown_end_message(std::uint32_t rank, std::string_view node, const TaskEnd& end,
                                 int signal, std::uint32_t job_id, std::uint32_t step_id) {
    return "rank " + std::to_string(rank) + " on " + std::string(node) +
           (end.how.rfind("exit", 0) == 0 ? " ended with " : " was killed by ") + end.how +
           " after step " + std::to_string(job_id) + "." + std::to_string(step_id) + " got " +
           signal_label(signal) + ": part of its shutdown, the other ranks are left to finish";
}

bool fail_fast_applies(const StepOptions& opts, bool user_asked) {
    if (opts.keep_going) return false;
    return user_asked || opts.fail_fast == FailFastScope::all;
}

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
        if (is_step_wide_signal(sig) || sig == SIGCONT) end.action = FailFastAction::none;
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
