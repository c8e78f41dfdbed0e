// SPDX-License-Identifier: Apache-2.0
// `slurm-ddp stacks --local JOB.STEP`: the part that runs on each node of the step (started by
// the front end through `srun --overlap`, or by hand there): takes the step's processes from
// slurmstepd (`scontrol listpids`), picks the ranks among them, and reads each one's stack with
// py-spy, gdb's py-bt, eu-stack or gdb, all at once, each within the bound; a rank in
// uninterruptible sleep gets its kernel stack instead, no tool.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "stacks/stacks_report.hpp"

namespace sddp::stacks {

struct LocalResult {
    std::string host;
    std::vector<RankStack> ranks;
    std::vector<std::string> node_errors;  // listpids failed or found nothing
};

// `job`/`step` as in SLURM_JOB_ID/SLURM_STEP_ID; each tool gets at most `per_tool`.
LocalResult read_local_stacks(const std::string& job, const std::string& step,
                              std::chrono::milliseconds per_tool);

// Exit codes: 0 every rank read, 1 a rank or the node failed (said on stderr), 2 usage.
int run_stacks_local(const std::vector<std::string>& args);

}  // namespace sddp::stacks
