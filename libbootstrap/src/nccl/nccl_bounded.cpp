// SPDX-License-Identifier: Apache-2.0
#include "nccl/nccl_bounded.hpp"

#include <thread>

namespace sddp::nccl {

BoundedCall::BoundedCall(std::function<void()> work, std::function<void()> if_abandoned)
    : state_(std::make_shared<State>()) {
    std::thread([state = state_, work = std::move(work), if_abandoned = std::move(if_abandoned)] {
        work();
        bool abandoned = false;
        {
            std::lock_guard<std::mutex> lock(state->mu);
            state->done = true;
            abandoned = state->abandoned;
            state->cv.notify_all();
        }
        if (abandoned && if_abandoned) if_abandoned();
    }).detach();
}

bool BoundedCall::wait_until(Clock::time_point deadline) {
    std::unique_lock<std::mutex> lock(state_->mu);
    return state_->cv.wait_until(lock, deadline, [&] { return state_->done; });
}

bool BoundedCall::abandon() {
    std::lock_guard<std::mutex> lock(state_->mu);
    if (state_->done) return true;
    state_->abandoned = true;
    return false;
}

}  // namespace sddp::nccl
