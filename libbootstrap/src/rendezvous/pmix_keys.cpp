// SPDX-License-Identifier: Apache-2.0
#include "rendezvous/pmix_keys.hpp"

namespace sddp::pmix {

std::string key(std::uint64_t seq) {
    return "sddp." + std::to_string(seq);
}

}  // namespace sddp::pmix
