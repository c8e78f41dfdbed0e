// SPDX-License-Identifier: Apache-2.0
// This machine's host name (gethostname), for messages and the rendezvous' default host.
#pragma once

#include <optional>
#include <string>

namespace sddp {

// nullopt when gethostname fails; each caller says what stands in for it.
std::optional<std::string> local_host_name();

}  // namespace sddp
