// SPDX-License-Identifier: Apache-2.0
// Where the core reads environment variables from.
//
// The pure functions never call getenv(): the plugin reads the *task's* environment through
// spank_getenv, the library and CLI read their own process environment (os/process_env), and tests
// pass a map.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace sddp {

using EnvLookup = std::function<std::optional<std::string>(std::string_view name)>;

// Lookup backed by a map (tests, and snapshots of an environment).
EnvLookup map_env(std::map<std::string, std::string, std::less<>> vars);

// One variable to set in a task's environment. `keep_existing` marks values a user may have
// exported themselves (MASTER_ADDR, MASTER_PORT, OMP_NUM_THREADS): the caller does not overwrite.
struct EnvAssignment {
    std::string name;
    std::string value;
    bool keep_existing = false;
};

}  // namespace sddp
