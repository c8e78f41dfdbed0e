// Waiting for non-blocking NCCL operations against a deadline.
//
// Communicators are created with config.blocking = 0 so that no NCCL call can block forever:
// init, split and finalize return ncclInProgress and we poll ncclCommGetAsyncError until the
// state settles or the deadline passes; the caller then aborts the communicator.
#pragma once

#include <nccl.h>

#include <chrono>
#include <string>

#include "core/result.hpp"

namespace sddp::nccl {

using Clock = std::chrono::steady_clock;

// Polls until `comm` leaves ncclInProgress. Errc::timeout at the deadline (comm left as is).
Status wait_ready(ncclComm_t comm, Clock::time_point deadline, const std::string& what);

// "ncclSystemError (...): <ncclGetLastError>" for messages.
std::string nccl_error_text(ncclResult_t r, ncclComm_t comm);

}  // namespace sddp::nccl
