// SPDX-License-Identifier: Apache-2.0
// SLURM_HOSTFILE under --distribution=arbitrary: which host runs each rank.
//
// Slurm reads the file on srun's host only, and ignores it when -w or --nodefile is given, yet
// still exports SLURM_HOSTFILE to the tasks. So the file is parsed here and then checked against
// what Slurm told this task (its own rank's host, the per-node counts); a file that does not
// describe the step is refused with the reason, never used for MASTER_ADDR.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/result.hpp"
#include "core/slurm/step_facts.hpp"

namespace sddp {

// Consecutive ranks on one host: "n2*3" is {n2, 3}. Runs keep memory proportional to the file.
struct HostRun {
    std::string host;
    std::uint32_t count = 0;
};

// Parses Slurm's host file syntax: one entry per line, '#' starts a comment, an entry is a host
// list ("n[1-2],n5": one rank per host) or "host*count". Stops after `max_ranks` ranks; a host
// list line naming more hosts than ranks are left is refused (Errc::too_large) rather than
// expanded, so memory stays proportional to the step.
Result<std::vector<HostRun>> parse_hostfile(std::string_view text, std::uint32_t max_ranks);

// The host of rank 0, after checking that the file describes this step: at least as many ranks
// as the step has tasks, this task's rank on this task's node, and the per-node counts Slurm
// gives. `path` is only for messages.
Result<std::string> hostfile_rank0_host(const StepFacts& facts, const std::vector<HostRun>& runs,
                                        std::string_view path);

}  // namespace sddp
