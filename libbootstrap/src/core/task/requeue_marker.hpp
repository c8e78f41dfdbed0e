// SPDX-License-Identifier: Apache-2.0
// --ddp=requeue's record that one run of a job got its early signal (SIGUSR1/SIGUSR2).
//
// The slurmstepd of a step on the job's first node writes it, as root, when the step's watcher
// saw the signal; the batch step there (slurmstepd, root) reads it when the batch script ends and
// requeues the job. The directory is root's alone, in the host's own /run: a job container's
// private /tmp and /dev/shm cannot hide it from the batch step, and no user can plant, replace or
// block a marker there. The name carries the node and the run (SLURM_RESTART_COUNT), so a later
// run of the job, which keeps its id after a requeue, never reads an earlier run's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/base/result.hpp"

namespace sddp {

inline constexpr const char* kRequeueMarkerDir = "/run/slurm-ddp";

struct RequeueMarker {
    std::uint32_t job_id = 0;
    std::uint32_t restart_count = 0;  // SLURM_RESTART_COUNT of the run
    std::string node;                 // SLURMD_NODENAME
};

// "requeue.JOB.RUN.NODE". Errc::invalid_input for a node name that cannot be a file name
// (empty, over 64 characters, or any character outside [A-Za-z0-9._-]).
Result<std::string> requeue_marker_name(const RequeueMarker& marker);

// The marker a file name stands for, nullopt for any other name.
std::optional<RequeueMarker> parse_requeue_marker_name(std::string_view name);

// SLURM_RESTART_COUNT as Slurm sets it for a requeued job's runs: unset or malformed is run 0.
std::uint32_t restart_count_of(std::optional<std::string_view> slurm_restart_count);

// Whether `node` is the first node of the job's allocation (SLURM_JOB_NODELIST), where Slurm
// starts the batch script unless `sbatch --batch=FEATURES` chose another node.
bool is_first_node_of_job(std::string_view job_nodelist, std::string_view node);

}  // namespace sddp
