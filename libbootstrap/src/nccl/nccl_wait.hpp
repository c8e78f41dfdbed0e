// SPDX-License-Identifier: Apache-2.0
// Waiting for non-blocking NCCL operations against a deadline.
//
// The communicator NCCL bootstraps is created with config.blocking = 0 so that no init or split
// can block forever: those calls return ncclInProgress and we poll ncclCommGetAsyncError until
// the state settles or the deadline passes; the caller then aborts the communicator.
#pragma once

#include <chrono>
#include <string>

#include "core/base/result.hpp"
#include "nccl/nccl_library.hpp"

namespace sddp::nccl {

using Clock = std::chrono::steady_clock;

// The pause before the next poll: doubling from 100 us, capped near 1 ms so that a wait never
// adds more than about a millisecond to init, split or finalize.
std::chrono::microseconds next_poll_pause(std::chrono::microseconds previous);

// Polls until `comm` leaves ncclInProgress. Errc::timeout at the deadline (comm left as is).
Status wait_ready(const NcclApi& nccl, ncclComm_t comm, Clock::time_point deadline,
                  const std::string& what);

// "ncclSystemError (...): <ncclGetLastError>" for messages.
std::string nccl_error_text(const NcclApi& nccl, ncclResult_t r, ncclComm_t comm);

}  // namespace sddp::nccl
