// SPDX-License-Identifier: Apache-2.0
// `slurm-ddp stacks` run as root: which programs it may execute. A tool (py-spy, gdb, eu-stack,
// scontrol) or a gdb extension is used as root only when nobody but root can have put it there:
// the file and every directory above it owned by root and writable by root alone, for the path
// as written and for every symlink on the way. Otherwise any local user who can write one of
// those places picks what root runs.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "core/base/result.hpp"

namespace sddp::stacks {

// One entry of a path as lstat/stat sees it.
struct PathEntry {
    std::string path;
    uid_t uid = 0;
    mode_t mode = 0;  // st_mode: type and permission bits
};

// "" when every entry is owned by root and not writable by group or others; else the first
// entry that is not, and why ("/tmp is writable by group or others (mode 1777)"). A sticky
// world-writable directory counts as writable: the rule is kept simple enough to state in the
// manual, and a root-only folder is always at hand for a tool (/usr/local/bin, /opt).
std::string untrusted_reason(const std::vector<PathEntry>& chain);

// `path` (absolute) checked as above, following symlinks: every directory the kernel walks
// through to reach the file, and the file itself, a regular executable. The resolved path on
// success (what to execute); Errc::invalid_input naming the entry and the fix otherwise.
Result<std::string> trusted_executable(const std::string& path);

// Same rule for a file that is read, not executed (a gdb extension script).
Result<std::string> trusted_file(const std::string& path);

// "DIR/name" for each absolute directory of the colon-separated `path_value`, in order.
std::vector<std::string> path_candidates(const std::string& name, const std::string& path_value);

struct PickedTool {
    std::string path;                  // "" when none fits
    std::vector<std::string> refused;  // candidates that exist but failed the root rule, and why
};

// The first executable among `candidates`; with `as_root`, the first that passes
// trusted_executable (its resolved path), the others that exist named in `refused`.
PickedTool pick_executable(const std::vector<std::string>& candidates, bool as_root);

// The reason(s) of `refused` as one clause for an error message ("" when empty).
std::string describe_refused(const std::vector<std::string>& refused);

}  // namespace sddp::stacks
