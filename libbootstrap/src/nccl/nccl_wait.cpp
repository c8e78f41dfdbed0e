// SPDX-License-Identifier: Apache-2.0
#include "nccl/nccl_wait.hpp"

#include <algorithm>
#include <thread>

namespace sddp::nccl {

std::string nccl_error_text(const NcclApi& nccl, ncclResult_t r, ncclComm_t comm) {
    std::string s = nccl.GetErrorString(r);
    const char* last = nccl.GetLastError(comm);
    if (last && *last) s += ": " + std::string(last);
    return s;
}

std::chrono::microseconds next_poll_pause(std::chrono::microseconds previous) {
    constexpr std::chrono::microseconds first{100}, cap{1000};
    if (previous < first) return first;
    return std::min(previous * 2, cap);
}

Status wait_ready(const NcclApi& nccl, ncclComm_t comm, Clock::time_point deadline,
                  const std::string& what) {
    std::chrono::microseconds pause{0};
    for (;;) {
        ncclResult_t state = ncclSuccess;
        const ncclResult_t r = nccl.CommGetAsyncError(comm, &state);
        if (r != ncclSuccess) {
            return make_error(Errc::io, what + ": ncclCommGetAsyncError failed: " +
                                            nccl_error_text(nccl, r, comm));
        }
        if (state == ncclSuccess) return ok_status();
        if (state != ncclInProgress) {
            return make_error(Errc::io, what + " failed: " + nccl_error_text(nccl, state, comm));
        }
        if (Clock::now() >= deadline) {
            return make_error(Errc::timeout, what + " did not complete before the deadline");
        }
        pause = next_poll_pause(pause);
        std::this_thread::sleep_for(pause);
    }
}

}  // namespace sddp::nccl
