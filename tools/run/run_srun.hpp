// SPDX-License-Identifier: Apache-2.0
// One srun of `slurm-ddp run`: started with its stderr through a pipe that this process copies,
// byte for byte and as it comes, to its own stderr (nothing the program prints is lost or held
// back), while the copy is read for the step's first failure. Where the user left the tasks'
// stderr to srun, srun gets --error=/dev/fd/N, N a second pipe copied the same way: srun then
// writes the tasks' stderr there and keeps its own messages on its stderr (Slurm's
// launch_common_set_stdio_fds: a file name without a %-pattern is opened by srun itself), so a
// task printing what looks like srun's report is not taken for it (run_failure.hpp).
//
// SIGINT, SIGTERM and SIGHUP end the run: srun gets SIGTERM (which makes it cancel the step) and,
// if it has not ended 30 s later, SIGKILL. SIGUSR1 and SIGUSR2 are passed on to srun once it can
// take them (run_signals.hpp) and has had time to launch the tasks it would pass them to, and the
// run goes on.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/base/result.hpp"
#include "run/run_failure.hpp"
#include "run/run_signals.hpp"

namespace sddp::run {

struct SrunCall {
    std::vector<std::string> argv;   // argv[0] is looked up on PATH
    std::vector<std::string> set;    // "NAME=value", replacing the same names of ours
    std::vector<std::string> unset;  // names of ours srun does not get
    // Add --error=/dev/fd/N (after argv[0]) and read the tasks' stderr apart from srun's own.
    bool tasks_stderr_apart = false;
};

struct SrunOutcome {
    int status = 0;      // srun's exit status, 128 + signal when it was killed
    int stopped_by = 0;  // the signal that ended the run, 0 when it ended by itself
    std::optional<StepFailure> failure;
    bool stderr_mid_line = false;  // the last byte passed on was not a newline
};

// Runs the call with this process's environment changed as it says, and waits for it. SIGUSR1
// and SIGUSR2 held in `signals` are passed on once srun can take them; those left held when srun
// ended stay there for the next run. An error only when srun could not be started.
Result<SrunOutcome> run_srun(const SrunCall& call, SignalCatcher& signals);

}  // namespace sddp::run
