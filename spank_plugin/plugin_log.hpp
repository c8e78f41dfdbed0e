// SPDX-License-Identifier: Apache-2.0
// Logging from inside Slurm processes.
//
// Everything goes through the core's one log sink, which the plugin points at Slurm's own log
// functions, prefixed "slurm-ddp: ", so admins
// find it in slurmd/slurmstepd logs. In a task (task_init) the user's terminal is the task's
// stderr, so errors that stop a --ddp step are also written there: otherwise the user would see
// only "task launch failed" and have to ask an admin for the slurmd log.
#pragma once

#include <string_view>

namespace sddp::plugin {

// Routes the library's log sink (core/base/log) to Slurm: error -> slurm_error, warn -> slurm_info,
// info -> slurm_verbose, debug -> slurm_debug. Called first in every process that loads us.
void use_slurm_log();

void log_error(std::string_view msg);
void log_info(std::string_view msg);
void log_verbose(std::string_view msg);
void log_debug(std::string_view msg);

// Write to the task's stderr (fd 2) in full; no stdout, no buffering, no exceptions.
void write_task_stderr(std::string_view text);

}  // namespace sddp::plugin
