// SPDX-License-Identifier: Apache-2.0
// mkdir -p, for the per-step debug directory (--ddp=debug). Runs as the user in task_init, so it
// can create nothing the user could not.
#pragma once

#include <string>

#include "core/result.hpp"

namespace sddp {

// Creates `path` and its missing parents (mode 0777 & ~umask). Existing directories are fine;
// an existing non-directory or a failed mkdir is an error naming the path and errno.
Status make_directories(const std::string& path);

}  // namespace sddp
