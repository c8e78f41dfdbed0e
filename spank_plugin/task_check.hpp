// SPDX-License-Identifier: Apache-2.0
// --ddp=check: `slurm-ddp check --before-program` runs in each task after its environment is set
// and before its program is exec'd; a failed check fails the task, so the program never starts.
//
// Why a child process: the check is the library's rendezvous among all tasks of the step plus
// name lookups, which belong in a normal process (threads, sockets, the shared library), not in
// slurmstepd's address space. task_init already runs in the forked task as the user, so the child
// gets the user's rights and the task's stdout/stderr, and nothing is left behind: it is waited
// for, within a bound, and killed past it.
#pragma once

#include <cstdint>

#include "spank_api.hpp"

namespace sddp::plugin {

// 0 when the check passed; -1 (after a line on the task's stderr) when it failed, could not run,
// or ran past `timeout_s` + a margin.
int run_task_check(spank_t sp, std::uint32_t timeout_s);

}  // namespace sddp::plugin
