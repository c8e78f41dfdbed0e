// SPDX-License-Identifier: Apache-2.0
// srun (local) and sbatch/salloc (allocator): validate options before anything is launched,
// create the step's rendezvous secret in srun, and report srun's own time.
#pragma once

#include "spank_api.hpp"

namespace sddp::plugin {

// slurm_spank_init_post_opt in srun: refuse the launch on bad options, else set the secret.
int on_srun_post_opt(spank_t sp);
// slurm_spank_local_user_init in srun (after the allocation, just before the launch): report
// srun's own time for a --ddp step.
int on_srun_user_init(spank_t sp);
// slurm_spank_init_post_opt in sbatch/salloc: refuse the submission on bad options.
int on_allocator_post_opt(spank_t sp);

}  // namespace sddp::plugin
