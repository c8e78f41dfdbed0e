// SPDX-License-Identifier: Apache-2.0
#include "core/base/env_lookup.hpp"

#include <utility>

namespace sddp {

EnvLookup map_env(std::map<std::string, std::string, std::less<>> vars) {
    return [vars = std::move(vars)](std::string_view name) -> std::optional<std::string> {
        auto it = vars.find(name);
        if (it == vars.end()) return std::nullopt;
        return it->second;
    };
}

}  // namespace sddp
