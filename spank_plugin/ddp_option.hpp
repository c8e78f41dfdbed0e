// SPDX-License-Identifier: Apache-2.0
// What the site and the user ask for: the plugin's arguments from plugstack.conf, and the --ddp
// option (its usage text and its callback), read in slurm_spank_init of every context that takes
// options (srun, sbatch/salloc, slurmstepd). Both are kept in the plugin state, not acted on.
#pragma once

#include "spank_api.hpp"

namespace sddp::plugin {

// Parses the plugin's arguments and registers --ddp. Never fails: a failing init would break
// steps that do not use --ddp; errors are kept for the steps that do.
int read_site_and_register_ddp(spank_t sp, int ac, char** av);

}  // namespace sddp::plugin
