// SPDX-License-Identifier: Apache-2.0
// StepFacts: what Slurm tells one task about its step, read and validated once.
//
// Slurm's variables arrive as strings from the task environment. They are parsed strictly and
// cross-checked (rank < world size, local id < tasks on this node, node list as long as the node
// count, per-node counts summing to the task count) so that an inconsistent environment is a clear
// error naming the variable and value, never a silently wrong rank.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/base/env_lookup.hpp"
#include "core/base/result.hpp"

namespace sddp {

// Slurm's special step ids (slurm.h): the batch script, the extern step, the interactive step...
inline constexpr std::uint32_t kFirstSpecialStepId = 0xfffffff0u;

struct StepFacts {
    std::uint32_t job_id = 0;
    std::uint32_t step_id = 0;
    std::uint32_t procid = 0;        // SLURM_PROCID: global rank (het offset included)
    std::uint32_t localid = 0;       // SLURM_LOCALID
    std::uint32_t nodeid = 0;        // SLURM_NODEID: index of this node in the step
    std::uint32_t node_index = 0;    // this node's index in `nodes` / `tasks_per_node` (by name)
    std::uint32_t ntasks = 0;        // SLURM_STEP_NUM_TASKS (falls back to SLURM_NTASKS)
    std::uint32_t nnodes = 0;        // SLURM_STEP_NUM_NODES (falls back to SLURM_NNODES)
    std::vector<std::string> nodes;  // SLURM_STEP_NODELIST, expanded
    std::vector<std::uint32_t> tasks_per_node;  // SLURM_STEP_TASKS_PER_NODE, expanded
    std::string node_name;                      // SLURMD_NODENAME (this task's node)
    std::string distribution;                   // SLURM_DISTRIBUTION ("block", "cyclic", ...)
    std::optional<std::string> hostfile;        // SLURM_HOSTFILE (arbitrary distribution)
    std::optional<std::string> resv_ports;      // SLURM_STEP_RESV_PORTS
    std::uint32_t plane_size = 0;               // SLURM_DIST_PLANESIZE (distribution "plane")
    // Heterogeneous jobs: SLURM_NODELIST_HET_GROUP_<i> (salloc; sbatch exports only
    // SLURM_JOB_NODELIST_HET_GROUP_<i>) for i < SLURM_HET_SIZE, unexpanded. Slurm
    // sorts the step's node list but numbers SLURM_NODEID in component order; see node_order.hpp.
    std::vector<std::string> het_component_nodelists;
    std::optional<std::uint32_t> cpus_per_task;  // SLURM_CPUS_PER_TASK
};

// True for ids of the batch script, extern and interactive steps, which --ddp never touches.
bool is_special_step(std::uint32_t step_id);

// Read the facts of the current task. Errors name the variable, its value and the fix.
Result<StepFacts> read_step_facts(const EnvLookup& env);

// Read only the step id (cheap, to skip special steps before anything else).
std::optional<std::uint32_t> read_step_id(const EnvLookup& env);

}  // namespace sddp
