// SPDX-License-Identifier: Apache-2.0
// Fail fast in slurmstepd: the first failed task on this node ends the whole step.
//
// Each node's slurmstepd sees only its own tasks, so each acts on the first failure it sees and
// asks slurmctld to kill the step (the same request as `scancel JOB.STEP`); nodes whose tasks
// are killed by that request see SIGKILL, which ends nothing new and reports nothing. The
// request is sent from a thread after a short delay: slurmstepd tells srun about a task's exit
// only after the task_exit hooks ran, and srun names a task killed by a signal only while the
// step has not been cancelled yet.
#pragma once

#include "spank_api.hpp"

namespace sddp::plugin {

// slurm_spank_task_exit, remote context. Never fails the step itself (returns 0).
int on_task_exit(spank_t sp);

// slurm_spank_exit, remote context: wait for a kill request still in flight, so that no thread
// runs plugin code when Slurm unloads the plugin.
void finish_fail_fast();

}  // namespace sddp::plugin
