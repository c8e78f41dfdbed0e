// SPDX-License-Identifier: Apache-2.0
// `--ddp=hostfile` on the node: write the step's host file before a task starts, remove it when
// the step ends. The text and the path come from the core (core/slurm/step_hostfile.hpp).
#pragma once

#include <cstdint>
#include <string>

#include "core/base/result.hpp"
#include "core/slurm/step_hostfile.hpp"

namespace sddp::plugin {

// In task_init (as the job's user). Every task of the node calls it with the same file: the
// text goes to a private temporary name and is linked to the path in one step, so the path
// never holds a partial file and the first task's link wins; a later task accepts the existing
// file only if it is a regular file of `uid` with the same text (a file planted by anyone else
// in /tmp is refused, never used).
Status write_step_hostfile(const StepHostfile& file, std::uint32_t uid);

// In slurm_spank_exit (slurmstepd, remote): removes the path if it is a regular file of `uid`.
void remove_step_hostfile(const std::string& path, std::uint32_t uid);

}  // namespace sddp::plugin
