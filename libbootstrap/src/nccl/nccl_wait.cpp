#include "nccl/nccl_wait.hpp"

#include <thread>

namespace sddp::nccl {

std::string nccl_error_text(ncclResult_t r, ncclComm_t comm) {
    std::string s = ncclGetErrorString(r);
    const char* last = ncclGetLastError(comm);
    if (last && *last) s += ": " + std::string(last);
    return s;
}

Status wait_ready(ncclComm_t comm, Clock::time_point deadline, const std::string& what) {
    // Short sleeps first (a one-node init takes milliseconds), then at most 20 ms between polls.
    auto pause = std::chrono::microseconds(200);
    for (;;) {
        ncclResult_t state = ncclSuccess;
        const ncclResult_t r = ncclCommGetAsyncError(comm, &state);
        if (r != ncclSuccess) {
            return make_error(Errc::io,
                              what + ": ncclCommGetAsyncError failed: " + nccl_error_text(r, comm));
        }
        if (state == ncclSuccess) return ok_status();
        if (state != ncclInProgress) {
            return make_error(Errc::io, what + " failed: " + nccl_error_text(state, comm));
        }
        if (Clock::now() >= deadline) {
            return make_error(Errc::timeout, what + " did not complete before the deadline");
        }
        std::this_thread::sleep_for(pause);
        pause = std::min<std::chrono::microseconds>(pause * 2, std::chrono::milliseconds(20));
    }
}

}  // namespace sddp::nccl
