// SPDX-License-Identifier: Apache-2.0
// The task's environment as the core sees it, through spank_getenv/spank_setenv.
#pragma once

#include <string>
#include <vector>

#include "core/base/env_lookup.hpp"
#include "core/base/result.hpp"
#include "spank_api.hpp"

namespace sddp::plugin {

// Values longer than this read as kOversizedValue (present, invalid): no variable Slurm sets comes
// close, and the plugin must not allocate without bound from a user's environment.
inline constexpr int kMaxEnvValue = 1 << 20;
inline constexpr const char* kOversizedValue = "<value longer than 1 MiB>";

EnvLookup spank_env(spank_t sp);

// Apply assignments; `keep_existing` ones are left alone where the variable is already set.
Status apply_env(spank_t sp, const std::vector<EnvAssignment>& vars);

}  // namespace sddp::plugin
