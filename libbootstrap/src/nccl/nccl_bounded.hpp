// SPDX-License-Identifier: Apache-2.0
// Bounding NCCL calls that block inside NCCL: ncclCommFinalize on a blocking communicator, and
// the first collective on one (which may connect the peers before it returns).
//
// Such a call runs on a thread of its own while the caller waits against its deadline. When the
// deadline passes, the caller aborts the communicator (ncclCommAbort from another thread is how
// NCCL lets a blocked call return) and waits a short grace for the thread; a thread that still
// does not return is left behind, owning whatever it touches (the work must capture shared
// state only), so the caller never waits longer than deadline + grace.
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
    // Starts `work` on a detached thread at once.
    explicit BoundedCall(std::function<void()> work);
    // True once `work` has returned; false at the deadline (the thread keeps running).
    bool wait_until(Clock::time_point deadline);

  private:
    struct State {
        std::mutex mu;
        std::condition_variable cv;
        bool done = false;
    };
    std::shared_ptr<State> state_;
};

// How long a caller waits for a call to return after aborting its communicator.
inline constexpr std::chrono::milliseconds kAbortGrace{2000};

}  // namespace sddp::nccl
