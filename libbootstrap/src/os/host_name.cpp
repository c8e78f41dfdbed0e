// SPDX-License-Identifier: Apache-2.0
#include "os/host_name.hpp"

#include <unistd.h>

namespace sddp {

std::optional<std::string> local_host_name() {
    char buf[256] = {};
    if (::gethostname(buf, sizeof buf - 1) != 0) return std::nullopt;
    return std::string(buf);
}

}  // namespace sddp
