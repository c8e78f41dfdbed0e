// SPDX-License-Identifier: Apache-2.0
// Under --ddp=debug, a rendezvous that times out leaves the stacks of its node's tasks of the
// step in the step's debug directory, stacks.<host>.txt, for the reader who finds the job
// ended: `slurm-ddp stacks --local JOB.STEP --report`, as the CLI's own node part.
#pragma once

#include <string>

#include "core/base/env_lookup.hpp"

namespace sddp {

// Best effort and bounded: returns within about 5 s whatever happens. Does nothing without
// SLURM_DDP_DEBUG_DIR, SLURM_JOB_ID or SLURM_STEP_ID, or when another task of the node
// already made the file (the first rank to time out writes it).
void write_debug_stacks(const EnvLookup& env, const std::string& host);

}  // namespace sddp
