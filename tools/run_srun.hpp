// SPDX-License-Identifier: Apache-2.0
// One srun of `slurm-ddp run`: started with its stderr through a pipe that this process copies,
// byte for byte and as it comes, to its own stderr (nothing the program prints is lost or held
// back), while the copy is read for the step's first failure.
//
// SIGINT, SIGTERM and SIGHUP end the run: srun gets SIGTERM (which makes it cancel the step) and,
// if it has not ended 30 s later, SIGKILL. SIGUSR1 and SIGUSR2 are passed on to srun, which
// passes them to the tasks (a trainer's checkpoint signal), and the run goes on.
#pragma once

#include <csignal>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/base/result.hpp"
#include "run_failure.hpp"

namespace sddp::run {

// Catches the signals above for the life of the object (one at a time per process) and turns
// them into bytes on a pipe; the old dispositions come back with it. SIGPIPE is ignored
// meanwhile, so a closed stderr does not end this process while srun runs.
class SignalCatcher {
  public:
    static Result<std::unique_ptr<SignalCatcher>> install();
    ~SignalCatcher();
    SignalCatcher(const SignalCatcher&) = delete;
    SignalCatcher& operator=(const SignalCatcher&) = delete;

    int read_fd() const { return read_fd_; }
    // A SIGINT, SIGTERM or SIGHUP that came while no srun ran (0: none); USR1/USR2 then had no
    // step to go to and are dropped.
    int take_pending_stop() const;

  private:
    SignalCatcher() = default;
    int read_fd_ = -1;
    int write_fd_ = -1;
    std::vector<std::pair<int, struct sigaction>> saved_;
};

struct SrunOutcome {
    int status = 0;      // srun's exit status, 128 + signal when it was killed
    int stopped_by = 0;  // the signal that ended the run, 0 when it ended by itself
    std::optional<StepFailure> failure;
    bool stderr_mid_line = false;  // the last byte passed on was not a newline
};

// Runs argv (argv[0] is looked up on PATH) with this process's environment, less the names in
// `unset`, plus `set` ("NAME=value"), and waits for it. An error only when srun could not be
// started.
Result<SrunOutcome> run_srun(const std::vector<std::string>& argv,
                             const std::vector<std::string>& set,
                             const std::vector<std::string>& unset, const SignalCatcher& signals);

}  // namespace sddp::run
