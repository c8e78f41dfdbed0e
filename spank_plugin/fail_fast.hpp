// SPDX-License-Identifier: Apache-2.0
// Fail fast in slurmstepd: the first failed task on this node ends the whole step.
//
// Each node's slurmstepd sees only its own tasks, so each acts on the first failure it sees and
// asks slurmctld to kill the step (the same request as `scancel JOB.STEP`). The request is sent
// from the step watch's thread (step_watch.hpp) after a short delay: slurmstepd tells srun about
// a task's exit only after the task_exit hooks ran, and srun names a task killed by a signal only
// while the step has not been cancelled yet. Before it is sent, the watch is asked again: a node
// whose watcher was killed with the step (another node's request, or scancel) sends none, so one
// failure costs one request, not one per node.
//
// A step that got a step-wide signal (scancel --signal=TERM, the time limit, preemption) is
// shutting down: its ranks may save and exit non-zero (torchrun exits 1 on SIGTERM, a bash trap
// exits 1), and killing the others then would cut their checkpoints short. Such an end is said
// at verbose level and ends nothing.
#pragma once

#include "core/options/options.hpp"
#include "spank_api.hpp"

namespace sddp::plugin {

// slurm_spank_task_exit of a task of a --ddp step (remote context). Never fails the step itself.
void on_fail_fast_task_exit(spank_t sp, const StepOptions& opts);

}  // namespace sddp::plugin
