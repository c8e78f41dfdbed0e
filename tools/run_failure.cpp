// SPDX-License-Identifier: Apache-2.0
#include "run_failure.hpp"

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
    f.rank = take_number(line);
    if (!f.rank) return std::nullopt;
    const auto reason_at = line.find(": ");
    if (reason_at == std::string_view::npos) return std::nullopt;
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

void FirstFailureWatch::feed_line(std::string_view line) {
    if (!from_plugin_) {
        if (auto f = parse_plugin_failure_line(line)) {
            from_plugin_ = std::move(f);
            return;
        }
    }
    if (!from_srun_) from_srun_ = parse_srun_failure_line(line);
}

std::optional<StepFailure> FirstFailureWatch::first() const {
    return from_plugin_ ? from_plugin_ : from_srun_;
}

}  // namespace sddp::run
