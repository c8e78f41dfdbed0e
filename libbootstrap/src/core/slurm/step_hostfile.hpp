// SPDX-License-Identifier: Apache-2.0
// `--ddp=hostfile`: the step's nodes as a `host slots=N` file (DeepSpeed, Open MPI, Horovod).
//
// One line per node of the step, rank 0's node first, then the others in the step's node order;
// slots are that node's tasks of the step, or under launcher the workers each node's launcher
// starts (nproc). Every task of a node computes the same text and the same path, so each may
// create the file (the plugin makes the creation atomic) and none waits for another. The path is
// node-local, fixed by the user, job, step and node id, so the node's slurmstepd can remove it
// when the step ends without keeping state; the node id keeps nodes that share /tmp (several
// slurmd on one host, a shared /tmp) from removing each other's file while its tasks still run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "core/base/result.hpp"
#include "core/slurm/step_facts.hpp"

namespace sddp {

struct StepHostfile {
    std::string path;
    std::string text;
};

// `first_node`: the index in facts.nodes of rank 0's node (core/task/rank_order.hpp's rank0_node,
// since which node that is depends on the --ddp options). `launcher_slots`: the workers per node
// under --ddp=launcher (nullopt: the step's tasks).
Result<StepHostfile> step_hostfile(const StepFacts& facts, std::size_t first_node,
                                   std::uint32_t uid, std::optional<std::uint32_t> launcher_slots);

// /tmp/slurm-ddp-hostfile.<uid>.<job>.<step>.<nodeid>  (nodeid: SLURM_NODEID, S_JOB_NODEID)
std::string step_hostfile_path(std::uint32_t uid, std::uint32_t job_id, std::uint32_t step_id,
                               std::uint32_t nodeid);

}  // namespace sddp
