// SPDX-License-Identifier: Apache-2.0
#include "nccl/nccl_bounded.hpp"

#include <thread>

namespace sddp::nccl {

BoundedCall::BoundedCall(std::function<void()> work) : state_(std::make_shared<State>()) {
    std::thread([state = state_, work = std::move(work)] {
        work();
        std::lock_guard<std::mutex> lock(state->mu);
        state->done = true;
        state->cv.notify_all();
    }).detach();
}

bool BoundedCall::wait_until(Clock::time_point deadline) {
    std::unique_lock<std::mutex> lock(state_->mu);
    return state_->cv.wait_until(lock, deadline, [&] { return state_->done; });
}

}  // namespace sddp::nccl
