// SPDX-License-Identifier: Apache-2.0
// The first failure of a step, read from srun's stderr as it streams past.
//
// Two sources say which rank failed first. srun itself reports each task that did not exit 0
// ("srun: error: n2: task 3: Exited with exit code 7", "srun: error: n1: tasks 0-2: Killed",
// "...: Segmentation fault (core dumped)", "srun: error: Node failure on n2"), in the order the
// nodes report them. The plugin's fail-fast report ("slurm-ddp: rank 3 on n2 ended with exit
// status 7; ending the other ranks of step 9.0 ...", "... was killed by signal 11 (SIGSEGV);
// ...") is written by the node where the first failure happened, before the other ranks are
// ended, and names the rank as the program knows it; so it wins when present. srun's first line
// is the answer otherwise (steps with --ddp=keep-going, a rank killed by SIGKILL, which the
// plugin cannot tell from a rank killed with the step, or a plugin without fail fast).
//
// Neither kind of line can be told from a task's own output by its text: a task may print
// "srun: error: n1: task 0: Exited with exit code 9" (a log it replays, a test of its own). So
// `slurm-ddp run` gives srun --error=/dev/fd/N where it can, which keeps the tasks' stderr (and
// slurmstepd's messages, which travel as task stderr) apart from srun's own. Then srun's lines
// are read from srun's stream alone, and a plugin report from the tasks' stream counts only where
// one of srun's lines confirms it: the same node, a task list holding the rank, the same status
// or signal. Where the user chose where stderr goes, both arrive mixed and are read as they come.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sddp::run {

enum class FailureKind {
    exit_status,   // value: the exit status
    signal,        // value: the signal number (0 where srun's description is not known here)
    node_failure,  // the node went away; no rank
    other,         // srun named a task and a reason this parser does not know (in `text`)
};

struct StepFailure {
    std::optional<std::uint32_t> rank;  // srun's (first) task id or the plugin's rank
    // srun's task list ("0-2,5" as [0,2], [5,5]); empty for the plugin and a node failure.
    std::vector<std::pair<std::uint32_t, std::uint32_t>> tasks;
    std::string node;
    FailureKind kind = FailureKind::other;
    int value = 0;
    std::string text;  // srun's or the plugin's own words for the reason
    bool from_plugin = false;
};

// One line of srun's stderr (without its newline); nullopt when it is not a report of a failed
// task or node.
std::optional<StepFailure> parse_srun_failure_line(std::string_view line);
std::optional<StepFailure> parse_plugin_failure_line(std::string_view line);

// Signal number of a strsignal() description as srun prints it ("Killed", "Segmentation
// fault"); srun runs on this host with this C library, so the descriptions match.
std::optional<int> signal_from_description(std::string_view description);

// "exit status 7", "signal 11 (SIGSEGV)", "node failure".
std::string describe_reason(const StepFailure& f);

// What the command exits with for this failure: the exit status, 128 + the signal, or nullopt
// (node failure, unknown reason: srun's own exit status then).
std::optional<int> failure_exit_status(const StepFailure& f);

// srun's report `srun` names the task and the end that the plugin's `report` names.
bool srun_confirms(const StepFailure& srun, const StepFailure& report);

// Keeps the first report of each kind, from the streams described at the top.
class FirstFailureWatch {
  public:
    // The most plugin reports from the tasks' stream kept until srun confirms one (distinct
    // ones; a real report comes once per node): a task printing such lines in a loop must not
    // make the list grow without bound.
    static constexpr std::size_t kMaxUnconfirmed = 64;
    static constexpr std::size_t kMaxSrunReports = 4096;

    // srun's stderr where the tasks' stderr is mixed in (the user chose where it goes).
    void feed_line(std::string_view line);
    // srun's own stderr, the tasks' kept apart: srun's reports.
    void feed_srun_line(std::string_view line);
    // The tasks' stderr with slurmstepd's messages: plugin reports, to be confirmed.
    void feed_task_line(std::string_view line);
    std::optional<StepFailure> first() const;

  private:
    std::optional<StepFailure> from_srun_;
    std::optional<StepFailure> from_plugin_;
    std::vector<StepFailure> srun_reports_;  // every one from srun's own stream, for confirming
    std::vector<StepFailure> unconfirmed_;   // plugin reports from the tasks' stream, in order
};

// Splits a byte stream into lines for the watch. A line longer than kMaxLine is not a Slurm
// message: it is dropped (the bytes still reach the user; only the parse skips it), so a
// program printing without newlines cannot make the buffer grow without bound.
class LineSplitter {
  public:
    static constexpr std::size_t kMaxLine = 4096;
    template <typename OnLine>
    void feed(std::string_view bytes, OnLine&& on_line) {
        for (char c : bytes) {
            if (c == '\n') {
                if (!overflow_) on_line(std::string_view(line_));
                line_.clear();
                overflow_ = false;
            } else if (!overflow_) {
                if (line_.size() >= kMaxLine) {
                    overflow_ = true;
                    line_.clear();
                } else {
                    line_.push_back(c);
                }
            }
        }
    }
    // The last line when the stream ended without a newline.
    template <typename OnLine>
    void finish(OnLine&& on_line) {
        if (!overflow_ && !line_.empty()) on_line(std::string_view(line_));
        line_.clear();
        overflow_ = false;
    }

  private:
    std::string line_;
    bool overflow_ = false;
};

}  // namespace sddp::run
