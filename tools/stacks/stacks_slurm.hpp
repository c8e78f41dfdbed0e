// SPDX-License-Identifier: Apache-2.0
// `slurm-ddp stacks JOB[.STEP]`: the step asked for, from the argument and from
// `scontrol show step -o`; the step's processes on a node from `scontrol listpids`. Pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/result.hpp"

namespace sddp::stacks {

struct StepTarget {
    std::string job;                  // digits
    std::optional<std::string> step;  // digits; nullopt: the job's newest step
};

// "123" or "123.4"; anything else is an error that shows the syntax.
Result<StepTarget> parse_step_target(std::string_view text);

struct StepInfo {
    std::string job;
    std::string step;  // "0", or "batch", "extern", "interactive"
    std::string nodelist;
    std::string tasks;
    std::string state;
};

// One StepInfo per line of `scontrol show step -o` output.
std::vector<StepInfo> parse_show_step(std::string_view text);

// The step to dump: the one asked for, else the job's highest-numbered step (batch, extern and
// interactive steps run no ranks). Errc::missing_input naming the job and what it has otherwise.
Result<StepInfo> pick_step(const std::vector<StepInfo>& steps, const StepTarget& target);

// One process of `scontrol listpids JOB.STEP NODE`, which slurmstepd answers from its proctrack
// plugin (the step's cgroup, or every descendant of the step daemon with proctrack/linuxproc):
// unlike a process's environment, nothing a user can claim.
struct ListedPid {
    int pid = 0;
    std::optional<long> global_id;  // the task's rank (GLOBALID); nullopt for other processes
};

// The lines of step `job`.`step` in listpids output ("PID JOBID STEPID LOCALID GLOBALID", '-'
// for the processes that are not a task's own); the header and other steps' lines are skipped.
std::vector<ListedPid> parse_listpids(std::string_view text, std::string_view job,
                                      std::string_view step);

}  // namespace sddp::stacks
