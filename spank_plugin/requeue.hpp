// SPDX-License-Identifier: Apache-2.0
// --ddp=requeue: a job whose steps Slurm signals early (sbatch --signal=USR1@T, scancel
// --signal=USR1) is requeued once its batch script ends; every run's ranks see
// SLURM_DDP_RESTARTS.
//
// Slurm tells no plugin that a step's tasks were signalled, and requeueing while ranks still
// save their checkpoint would kill them mid-write. So, per node, local task 0 of a requeue step
// leaves a small watcher process in the step (Slurm signals every process of the step, so the
// watcher gets the signal the ranks get); it records the signal in a node-local marker file.
// The batch step's slurmstepd, when the batch script has ended (so every srun step has too),
// finds the marker on the batch host and requeues the job, as root, through slurmctld.
#pragma once

#include "core/options/options.hpp"
#include "spank_api.hpp"

namespace sddp::plugin {

// task_init of a --ddp task (in the task, before exec): SLURM_DDP_RESTARTS for every --ddp task;
// under requeue, the watcher (local task 0) and, for a per-node launcher, SIGUSR1/SIGUSR2
// ignored so that the launcher outlives the signal its workers save on.
void on_requeue_task_init(spank_t sp, const DdpOptions& opts);

bool is_batch_script(spank_t sp);

// slurm_spank_task_exit for the batch script (slurmstepd, root): requeue if a step recorded an
// early signal on this node.
int on_batch_script_exit(spank_t sp);

}  // namespace sddp::plugin
