// SPDX-License-Identifier: Apache-2.0
// The per-step debug directory (--ddp=debug). Runs as the user in task_init, so it can create
// nothing the user could not; what it must prevent is another user choosing where the step's
// logs go (a planted directory or symbolic link), since NCCL and torch open their files there
// by name and follow links.
#pragma once

#include <string>

#include "core/base/result.hpp"

namespace sddp {

// `path` (absolute) as a directory only the caller can write into:
//   - it is walked one component at a time from "/" and no symbolic link on it is followed
//     (refused by name), so the directories checked are the ones used;
//   - missing directories are created 0700;
//   - every directory above the parent must not be writable by group or others, unless sticky
//     and owned by root or the caller (/tmp), since the owner of a sticky directory may still
//     rename what is in it;
//   - its parent must be the caller's and writable by nobody else: in a shared parent another
//     user could have made `path` first, so it is refused by name, never used;
//   - `path` itself is created 0700 or, where another task of the step made it first, used only
//     if it is a real directory (opened with O_NOFOLLOW), the caller's, writable by nobody else.
Status make_private_directory(const std::string& path);

}  // namespace sddp
