// SPDX-License-Identifier: Apache-2.0
// `slurm-ddp check [--json] [--nccl] [--timeout=SECONDS] [--before-program]`, run by every task
// of a step (`srun --ddp slurm-ddp check`): gather what this task sees (check_facts), run the
// library's own rendezvous and preflight (sddp_init), exchange the records, judge them
// (core/check/), and let rank 0 print the table and the verdict.
//
// Exit status: 0 healthy, 1 a problem was found (one line each), 2 usage error.
#pragma once

#include <string>
#include <vector>

namespace sddp::check {

inline constexpr const char* kCheckUsage =
    "slurm-ddp check [--json] [--nccl] [--timeout=SECONDS]   (as srun --ddp slurm-ddp check)\n";

int run_check_command(const std::vector<std::string>& args);

}  // namespace sddp::check
