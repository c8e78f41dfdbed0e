// SPDX-License-Identifier: Apache-2.0
// The sddp_init sequence, as C++: identity -> GPU -> rendezvous -> preflight -> NCCL.
#pragma once

#include <memory>

#include "api/handle.hpp"
#include "api/settings.hpp"

namespace sddp::api {

// On failure, records the message (sddp_last_error) and returns the sddp_status.
int bootstrap(const Settings& s, const EnvLookup& env, std::unique_ptr<sddp_handle>& out);

// ncclCommFinalize/Destroy (bounded), then closes the transport. Status as above.
int shutdown(std::unique_ptr<sddp_handle> h);
void abort_handle(std::unique_ptr<sddp_handle> h, const char* reason);

}  // namespace sddp::api
