// SPDX-License-Identifier: Apache-2.0
// The slurmstepd side (remote context): one function per SPANK hook, called by plugin.cpp.
//
// The step's options are merged once, in init_post_opt (ddp_step.hpp); each later hook hands that
// one result to what it runs: the task's environment and its check (task_setup.hpp), fail fast
// (fail_fast.hpp), requeue (requeue.hpp), the step watch (step_watch.hpp) and the host file.
#pragma once

#include "spank_api.hpp"

namespace sddp::plugin {

// Reads the plugin's arguments and registers --ddp, as srun and sbatch do, then what only
// slurmstepd's init can see.
int slurmstepd_init(spank_t sp, int ac, char** av);
int slurmstepd_post_opt(spank_t sp);
int slurmstepd_user_init(spank_t sp);
int slurmstepd_task_init(spank_t sp);
int slurmstepd_task_exit(spank_t sp);
int slurmstepd_exit(spank_t sp);

}  // namespace sddp::plugin
