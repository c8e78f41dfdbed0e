// SPDX-License-Identifier: Apache-2.0
// Bounding NCCL calls that block inside NCCL: ncclCommFinalize on a blocking communicator (it
// waits for the operations still queued on it), and the first collective on one (which may
// connect the peers before it returns).
//
// Such a call runs on a thread of its own while the caller waits against its deadline. A
// communicator is used by one thread at a time: ncclCommAbort from another thread while a call
// is still inside NCCL frees the communicator under that call (NCCL's commReclaim goes straight
// to freeing once ncclCommFinalize has started), so the caller never aborts a communicator whose
// call has not returned. When the deadline passes it abandons the call instead: the thread then
// owns the communicator and runs `if_abandoned` (typically ncclCommAbort) once the call returns,
// which NCCL makes happen when another communicator sharing its abort flag is aborted, or at the
// latest when the process exits. The work must capture shared state only, never the caller's
// stack.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>

namespace sddp::nccl {

class BoundedCall {
  public:
    using Clock = std::chrono::steady_clock;
    // Starts `work` on a detached thread at once; `if_abandoned` runs on that thread after
    // `work` returns, only when the caller abandoned the call before.
    explicit BoundedCall(std::function<void()> work, std::function<void()> if_abandoned = {});
    // True once `work` has returned; false at the deadline (the thread keeps running).
    bool wait_until(Clock::time_point deadline);
    // Gives the call up. True: `work` had returned after all, and whatever it touched is the
    // caller's again. False: it is still running and will run `if_abandoned` when it returns.
    bool abandon();

  private:
    struct State {
        std::mutex mu;
        std::condition_variable cv;
        bool done = false;
        bool abandoned = false;
    };
    std::shared_ptr<State> state_;
};

}  // namespace sddp::nccl
