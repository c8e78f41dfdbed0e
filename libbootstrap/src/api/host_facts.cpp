// SPDX-License-Identifier: Apache-2.0
#include "api/host_facts.hpp"

#include <unistd.h>

namespace sddp::api {
std::string host_name() {
    char buf[256] = {};
    if (::gethostname(buf, sizeof buf - 1) != 0 || buf[0] == '\0') return "unknown-host";
    return buf;
}

}  // namespace sddp::api
