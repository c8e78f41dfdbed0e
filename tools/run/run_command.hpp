// SPDX-License-Identifier: Apache-2.0
// `slurm-ddp run --restarts=N [srun options] -- program ...`: inside an allocation larger than
// the step, runs the program as an `srun --ddp` step; when a run fails, leaves out the node of its
// first failure and starts again on the remaining nodes, at most N times. One summary line per
// run on stderr; the exit status is the last run's.
#pragma once

#include <string>
#include <vector>

namespace sddp::cli {

// Exit codes: the last run's status (0 when it succeeded; a failed rank's exit status, or 128 +
// its signal), 128 + the signal when SIGINT/SIGTERM/SIGHUP stopped it, 1 bad input or srun not
// started, 2 usage error.
int run_run_command(const std::vector<std::string>& args);

}  // namespace sddp::cli
