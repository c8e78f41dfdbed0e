// SPDX-License-Identifier: Apache-2.0
// `slurm-ddp stacks JOBID[.STEPID]`: the stack of every rank of a running step, read on its
// nodes through `srun --overlap` (stacks_local.hpp), identical stacks grouped, odd ones first.
#pragma once

#include <string>
#include <vector>

namespace sddp::stacks {

// Exit codes: 0 every rank read, 1 an error (the step, a node or a rank; said on stderr),
// 2 usage error.
int run_stacks_command(const std::vector<std::string>& args);

}  // namespace sddp::stacks
