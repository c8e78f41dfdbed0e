// SPDX-License-Identifier: Apache-2.0
#include "os/process_env.hpp"

#include <cstdlib>
#include <string>

namespace sddp {

EnvLookup process_env() {
    return [](std::string_view name) -> std::optional<std::string> {
        const char* v = std::getenv(std::string(name).c_str());
        if (v == nullptr) return std::nullopt;
        return std::string(v);
    };
}

}  // namespace sddp
