// SPDX-License-Identifier: Apache-2.0
// --ddp=requeue: a job whose steps Slurm signals early (sbatch --signal=USR1@T, scancel
// --signal=USR1) is requeued once its batch script ends; every run's ranks see
// SLURM_DDP_RESTARTS.
//
// Requeueing while ranks still save their checkpoint would kill them mid-write, so nothing
// happens at the signal itself. The step watch (step_watch.hpp) sees it; when a task of the step
// ends on the job's first node, that node's slurmstepd records it in a root-only marker
// (requeue_markers.hpp). The batch step's slurmstepd there, when the batch script has ended
// (so every srun step has too), finds the marker and requeues the job through slurmctld, only
// while the job still runs: a job its user cancelled meanwhile stays cancelled.
#pragma once

#include "core/options/options.hpp"
#include "spank_api.hpp"

namespace sddp::plugin {

// task_init of a --ddp task (in the task, before exec): under requeue with a per-node launcher,
// SIGUSR1/SIGUSR2 ignored so that the launcher outlives the signal its workers save on.
void on_requeue_task_init(const StepOptions& opts);

// task_exit of a task of a --ddp step (slurmstepd, root): the marker, once the step got its
// early signal, on the job's first node.
void on_requeue_task_exit(spank_t sp, const StepOptions& opts);

// slurm_spank_exit of such a step: the marker goes again where the job no longer runs.
void on_requeue_step_exit();

bool is_batch_script(spank_t sp);

// slurm_spank_task_exit for the batch script (slurmstepd, root): requeue if a step recorded an
// early signal of this run on this node.
int on_batch_script_exit(spank_t sp);

}  // namespace sddp::plugin
