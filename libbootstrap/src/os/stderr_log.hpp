// SPDX-License-Identifier: Apache-2.0
// The library's own log sink: one line per message on stderr, prefixed "slurm-ddp: ".
#pragma once

#include "core/base/env_lookup.hpp"
#include "core/base/log.hpp"

namespace sddp {

void stderr_log_sink(LogLevel level, std::string_view message);

// Installs stderr_log_sink at the level SDDP_DEBUG asks for, unless a host (the plugin) has
// installed its own sink. A bad value is reported once, as a warning, and the default is used:
// a typo in a debug switch must not stop a job.
void use_stderr_log(const EnvLookup& env);

}  // namespace sddp
