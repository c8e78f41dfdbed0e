// SPDX-License-Identifier: Apache-2.0
// `slurm-ddp env`: the environment `srun --ddp` gives this task, computed by the same pipeline
// the plugin runs (core/task/task_env), with the site's plugin arguments read from plugstack.conf.
#pragma once

#include <string>
#include <vector>

namespace sddp::cli {

// Exit codes: 0 success, 1 bad input (message on stderr), 2 usage error.
int run_env_command(const std::vector<std::string>& args);

}  // namespace sddp::cli
