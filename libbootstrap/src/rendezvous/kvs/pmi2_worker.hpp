// SPDX-License-Identifier: Apache-2.0
// Bounded PMI2 calls.
//
// PMI2 has no timeouts: PMI2_KVS_Fence blocks in read() on PMI_FD until every rank of the step
// has fenced, so one rank that never arrives would hang all the others forever. Every PMI2 call
// therefore runs on one worker thread (which also serialises them: Slurm's client is not
// thread-safe), and the caller waits for it only until the deadline.
//
// What happens at the deadline (the choice, documented): the caller gets Errc::timeout and the
// worker is marked wedged. The blocked call cannot be cancelled, so the thread is left blocked
// and detached; every later PMI2 call in this process fails at once with the original reason.
// We do not call PMI2_Abort, because Slurm's PMI2_Abort calls exit() in this process; killing
// the step is left to the program (which gets the error) and to Slurm (which ends the step when
// the program exits with an error).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "core/base/result.hpp"

namespace sddp {

// The PMIx transport uses the same worker (PMIx_Fence blocks the same way); `library` names the
// library in the error every later call gets ("PMI2", "PMIx").
class Pmi2Worker {
  public:
    explicit Pmi2Worker(std::string library = "PMI2");
    ~Pmi2Worker();
    Pmi2Worker(const Pmi2Worker&) = delete;
    Pmi2Worker& operator=(const Pmi2Worker&) = delete;

    // Runs `fn` on the worker thread and returns its result, or Errc::timeout naming `what` if
    // it has not returned by `deadline`.
    Result<int> call(std::function<int()> fn, std::chrono::steady_clock::time_point deadline,
                     std::string_view what);

    struct State;  // shared with the worker thread, which may outlive this object

  private:
    std::shared_ptr<State> state_;
};

}  // namespace sddp
