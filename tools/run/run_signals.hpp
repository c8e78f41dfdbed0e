// SPDX-License-Identifier: Apache-2.0
// The signals `slurm-ddp run` takes while it runs: SIGINT, SIGTERM and SIGHUP stop it; SIGUSR1
// and SIGUSR2 (a trainer's checkpoint signal) are for the program, so they are passed on to srun,
// which passes them to the tasks. Those that come while no srun can take them (between two runs,
// or before srun has set itself up to) are held and passed on once the next srun can.
#pragma once

#include <sys/types.h>

#include <csignal>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "core/base/result.hpp"

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

    // Readable when signals came; collect() takes them.
    int read_fd() const { return read_fd_; }
    void collect();
    // The first SIGINT, SIGTERM or SIGHUP collected (0: none). It stays: the command stops.
    int stop() const { return stop_; }
    // SIGUSR1/SIGUSR2 collected and not passed on yet, in the order they came, each once: a
    // second one before the first was passed on is one, as the kernel keeps a pending signal.
    const std::vector<int>& held() const { return held_; }
    void passed_on(int sig);

  private:
    SignalCatcher() = default;
    int read_fd_ = -1;
    int write_fd_ = -1;
    int stop_ = 0;
    std::vector<int> held_;
    std::vector<std::pair<int, struct sigaction>> saved_;
};

// Whether the process whose /proc/PID/status text is `status` would survive `sig`: it blocks,
// ignores or catches it (SigBlk, SigIgn, SigCgt of its main thread) and has not ended. srun
// blocks its signals first thing and takes them from a thread of its own; before that, SIGUSR1's
// default action would end srun, and the step with it.
bool status_takes_signal(std::string_view status, int sig);

// The same for a running process, read from /proc; false where it cannot be read.
bool process_takes_signal(pid_t pid, int sig);

}  // namespace sddp::run
