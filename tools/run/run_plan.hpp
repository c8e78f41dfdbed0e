// SPDX-License-Identifier: Apache-2.0
// `slurm-ddp run`: which nodes each run gets, the restart count it is told, and the one line
// that sums a run up.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/result.hpp"
#include "run/run_args.hpp"
#include "run/run_failure.hpp"

namespace sddp::run {

struct NodePool {
    std::vector<std::string> allocation;  // SLURM_JOB_NODELIST, expanded, in Slurm's order
    std::string allocation_text;          // as Slurm wrote it
    std::vector<std::string> excluded;    // -x: never used
    std::vector<std::string> failed;      // where earlier runs failed first, in run order
};

// The nodes of the next run: the first usable ones of the allocation, as many as `want.max`
// allows, at least `want.min`; an error naming the numbers and the fix otherwise.
Result<std::vector<std::string>> choose_run_nodes(const NodePool& pool, const RunRequest& req);

// SLURM_DDP_RESTARTS of the first run: the job's SLURM_RESTART_COUNT (runs before a requeue),
// 0 where Slurm did not set it.
Result<std::uint32_t> first_restart_count(const std::optional<std::string>& slurm_restart_count);

struct RunRecord {
    std::uint32_t number = 1;    // 1-based
    std::uint32_t max_runs = 1;  // --restarts + 1
    std::vector<std::string> nodes;
    std::uint32_t restart_count = 0;  // what the run's SLURM_DDP_RESTARTS said
    int srun_status = 0;              // srun's exit status (128 + signal when it was killed)
    std::optional<StepFailure> failure;
};

// "slurm-ddp run: run 1 of 2 on n[1-2] (SLURM_DDP_RESTARTS=0): failed, rank 3 on n2: exit status
// 7" followed by `; ` and `next` when that is not empty.
std::string summary_line(const RunRecord& r, std::string_view next);

// The status the command ends with after run `r`: the first failure's own (exit status, or 128 +
// signal), srun's where no failure was named.
int run_exit_status(const RunRecord& r);

}  // namespace sddp::run
