// SPDX-License-Identifier: Apache-2.0
#include "run/run_failure.hpp"

#include <algorithm>
#include <charconv>
#include <csignal>
#include <cstdint>
#include <cstring>

namespace sddp::run {
namespace {

// Reads an unsigned decimal at the front of `s` and drops it from `s`.
std::optional<std::uint32_t> take_number(std::string_view& s) {
    std::uint32_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p == s.data()) return std::nullopt;
    s.remove_prefix(static_cast<std::size_t>(p - s.data()));
    return v;
}

bool take_prefix(std::string_view& s, std::string_view prefix) {
    if (s.substr(0, prefix.size()) != prefix) return false;
    s.remove_prefix(prefix.size());
    return true;
}

std::string signal_abbrev(int sig) {
    // sigabbrev_np is glibc-only (2.32); elsewhere the number stands alone.
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
    if (const char* abbrev = sigabbrev_np(sig)) return std::string("SIG") + abbrev;
#endif
    (void)sig;
    return "";
}

// "rank N on HOST ended with exit status X" / "rank N on HOST was killed by signal S (SIGX)",
// at the front of `s`.
std::optional<StepFailure> parse_plugin_report(std::string_view s) {
    StepFailure f;
    f.from_plugin = true;
    if (!take_prefix(s, "rank ")) return std::nullopt;
    f.rank = take_number(s);
    if (!f.rank || !take_prefix(s, " on ")) return std::nullopt;
    const auto space = s.find(' ');
    if (space == 0 || space == std::string_view::npos) return std::nullopt;
    f.node = std::string(s.substr(0, space));
    s.remove_prefix(space);
    if (take_prefix(s, " ended with exit status ")) {
        f.kind = FailureKind::exit_status;
    } else if (take_prefix(s, " was killed by signal ")) {
        f.kind = FailureKind::signal;
    } else {
        return std::nullopt;
    }
    const auto value = take_number(s);
    if (!value) return std::nullopt;
    f.value = static_cast<int>(*value);
    f.text = f.kind == FailureKind::exit_status ? "exit status " + std::to_string(f.value)
                                                : "signal " + std::to_string(f.value);
    return f;
}

// srun's task list, as Slurm's bit_fmt writes it: "3", "0-2,5". Empty when malformed.
std::vector<std::pair<std::uint32_t, std::uint32_t>> parse_task_list(std::string_view s) {
    std::vector<std::pair<std::uint32_t, std::uint32_t>> out;
    do {
        const auto lo = take_number(s);
        auto hi = lo;
        if (lo && take_prefix(s, "-")) hi = take_number(s);
        if (!lo || !hi || *hi < *lo) return {};
        out.emplace_back(*lo, *hi);
    } while (take_prefix(s, ","));
    if (!s.empty()) return {};
    return out;
}

bool same_end(const StepFailure& a, const StepFailure& b) {
    return a.kind == b.kind && a.value == b.value && a.node == b.node && a.rank == b.rank;
}

}  // namespace

std::optional<int> signal_from_description(std::string_view description) {
    for (int sig = 1; sig < NSIG; ++sig) {
        const char* d = ::strsignal(sig);  // NOLINT(concurrency-mt-unsafe): one thread
        if (d != nullptr && description == d) return sig;
    }
    return std::nullopt;
}

std::optional<StepFailure> parse_srun_failure_line(std::string_view line) {
    // srun's messages share its stderr with the tasks' output: after a task's last line without
    // a newline, srun's message starts in the middle of the line.
    constexpr std::string_view kPrefix = "srun: error: ";
    const auto at = line.find(kPrefix);
    if (at == std::string_view::npos) return std::nullopt;
    line.remove_prefix(at + kPrefix.size());
    StepFailure f;
    if (take_prefix(line, "Node failure on ")) {
        if (line.empty() || line.find(' ') != std::string_view::npos) return std::nullopt;
        f.node = std::string(line);
        f.kind = FailureKind::node_failure;
        f.text = "node failure";
        return f;
    }
    // "HOST: task 3: REASON" or "HOST: tasks 0-2,5: REASON"; the first task listed stands for
    // them (they ended together, as far as srun can tell).
    const auto colon = line.find(": task");
    if (colon == 0 || colon == std::string_view::npos) return std::nullopt;
    f.node = std::string(line.substr(0, colon));
    if (f.node.find(' ') != std::string::npos) return std::nullopt;
    line.remove_prefix(colon + 2);
    if (!take_prefix(line, "tasks ") && !take_prefix(line, "task ")) return std::nullopt;
    const auto reason_at = line.find(": ");
    if (reason_at == std::string_view::npos) return std::nullopt;
    f.tasks = parse_task_list(line.substr(0, reason_at));
    if (f.tasks.empty()) return std::nullopt;
    f.rank = f.tasks.front().first;
    std::string_view reason = line.substr(reason_at + 2);
    if (reason.empty()) return std::nullopt;
    if (take_prefix(reason, "Exited with exit code ")) {
        const auto code = take_number(reason);
        if (!code || !reason.empty()) return std::nullopt;
        f.kind = FailureKind::exit_status;
        f.value = static_cast<int>(*code);
        f.text = "exit status " + std::to_string(f.value);
        return f;
    }
    f.text = std::string(reason);
    constexpr std::string_view kCore = " (core dumped)";
    if (reason.size() > kCore.size() && reason.substr(reason.size() - kCore.size()) == kCore) {
        reason.remove_suffix(kCore.size());
    }
    if (auto sig = signal_from_description(reason)) {
        f.kind = FailureKind::signal;
        f.value = *sig;
    }
    return f;
}

std::optional<StepFailure> parse_plugin_failure_line(std::string_view line) {
    constexpr std::string_view kTail = "; ending the other ranks";
    const auto tail = line.find(kTail);
    if (tail == std::string_view::npos) return std::nullopt;
    const std::string_view head = line.substr(0, tail);
    // The report may follow any prefix Slurm puts before a step's message.
    for (auto at = head.rfind("rank "); at != std::string_view::npos;
         at = at == 0 ? std::string_view::npos : head.rfind("rank ", at - 1)) {
        if (at > 0 && head[at - 1] != ' ') continue;
        if (auto f = parse_plugin_report(head.substr(at))) return f;
    }
    return std::nullopt;
}

std::string describe_reason(const StepFailure& f) {
    switch (f.kind) {
        case FailureKind::exit_status:
            return "exit status " + std::to_string(f.value);
        case FailureKind::signal: {
            if (f.value == 0) return "signal (" + f.text + ")";
            const std::string abbrev = signal_abbrev(f.value);
            return "signal " + std::to_string(f.value) +
                   (abbrev.empty() ? "" : " (" + abbrev + ")");
        }
        case FailureKind::node_failure:
            return "node failure";
        case FailureKind::other:
            break;
    }
    return f.text;
}

std::optional<int> failure_exit_status(const StepFailure& f) {
    if (f.kind == FailureKind::exit_status && f.value > 0) return f.value;
    if (f.kind == FailureKind::signal && f.value > 0) return 128 + f.value;
    return std::nullopt;
}

bool srun_confirms(const StepFailure& srun, const StepFailure& report) {
    if (!report.rank || srun.node != report.node || srun.kind != report.kind ||
        srun.value != report.value) {
        return false;
    }
    // Only an end both can name: srun's "Out Of Memory" or an unknown signal text is not one.
    if (srun.kind != FailureKind::exit_status &&
        (srun.kind != FailureKind::signal || srun.value == 0)) {
        return false;
    }
    for (const auto& [lo, hi] : srun.tasks) {
        if (*report.rank >= lo && *report.rank <= hi) return true;
    }
    return false;
}

void FirstFailureWatch::feed_line(std::string_view line) {
    if (!from_plugin_) {
        if (auto f = parse_plugin_failure_line(line)) {
            from_plugin_ = std::move(f);
            return;
        }
    }
    if (!from_srun_) from_srun_ = parse_srun_failure_line(line);
}

void FirstFailureWatch::feed_srun_line(std::string_view line) {
    auto f = parse_srun_failure_line(line);
    if (!f) return;
    if (!from_srun_) from_srun_ = f;
    if (srun_reports_.size() < kMaxSrunReports) srun_reports_.push_back(std::move(*f));
}

void FirstFailureWatch::feed_task_line(std::string_view line) {
    auto f = parse_plugin_failure_line(line);
    if (!f || unconfirmed_.size() >= kMaxUnconfirmed) return;
    const auto same = [&f](const StepFailure& known) { return same_end(known, *f); };
    if (std::any_of(unconfirmed_.begin(), unconfirmed_.end(), same)) return;
    unconfirmed_.push_back(std::move(*f));
}

std::optional<StepFailure> FirstFailureWatch::first() const {
    if (from_plugin_) return from_plugin_;
    // srun's lines may come after the report they confirm: the report was written before the
    // step was ended, srun's line when slurmstepd told it.
    const auto confirmed = [this](const StepFailure& report) {
        return std::any_of(
            srun_reports_.begin(), srun_reports_.end(),
            [&report](const StepFailure& srun) { return srun_confirms(srun, report); });
    };
    const auto it = std::find_if(unconfirmed_.begin(), unconfirmed_.end(), confirmed);
    if (it != unconfirmed_.end()) return *it;
    return from_srun_;
}

}  // namespace sddp::run
