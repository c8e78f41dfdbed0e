// SPDX-License-Identifier: Apache-2.0
// The calling process's own environment as an EnvLookup (the library and the CLI; the plugin
// reads the task's environment through SPANK instead).
#pragma once

#include "core/base/env_lookup.hpp"

namespace sddp {

EnvLookup process_env();

}  // namespace sddp
