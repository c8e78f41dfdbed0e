// SPDX-License-Identifier: Apache-2.0
// The C API's error channel: a status code plus a thread-local message.
//
// Why thread-local: a failed sddp_init has no handle to hang a message on, and ctypes/cffi
// callers read the message right after the failing call on the same thread.
#pragma once

#include <string>

#include "core/base/result.hpp"

namespace sddp::api {

// Which step of sddp_init (or which call) failed; decides the sddp_status for an Errc.
enum class Phase { argument, identity, rendezvous, preflight, cuda, nccl, internal };

int status_for(Phase phase, Errc code);

// Records the failure for sddp_last_error() and returns its status.
int set_last_error(int status, std::string message);
int fail(Phase phase, const Error& e);

const char* last_error_message();
int last_error_code();

}  // namespace sddp::api
