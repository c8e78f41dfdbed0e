// SPDX-License-Identifier: Apache-2.0
// The plugin's line in a plugstack.conf, so that `slurm-ddp env` applies the site's arguments
// exactly as slurmstepd hands them to the plugin.
//
// Grammar (Slurm's spank(8), read as src/common/plugstack.c reads it): one
// `required|optional PATH [ARGS...]` or `include GLOB` per line, `#` starts a comment. Lines are
// taken in order, an include's files at the include's place (a relative GLOB is relative to the
// including file's directory). The plugin's line is the first whose PATH ends in kPluginFileName.
// Which file: slurm.conf's PlugStackConfig, else plugstack.conf beside slurm.conf.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sddp {

inline constexpr const char* kPluginFileName = "spank_ddp.so";

struct PlugstackScan {
    std::optional<std::vector<std::string>> plugin_args;  // the plugin's line, when present
    std::vector<std::string> includes;                    // `include` patterns, in order
    std::size_t includes_before_plugin = 0;  // of `includes`, those above the plugin's line
};

// Reads one file's text. Only the first line naming the plugin counts, as in Slurm (a second
// one would load it twice and Slurm refuses that).
PlugstackScan scan_plugstack(std::string_view text);

// An include pattern as Slurm globs it: a relative one from the directory of `including_file`.
std::string include_pattern(std::string_view including_file, std::string_view pattern);

// slurm.conf's PlugStackConfig value (keys are case-insensitive, the last one counts), or nullopt.
std::optional<std::string> plugstack_setting(std::string_view slurm_conf_text);

// Slurm's default when slurm.conf sets none: plugstack.conf in slurm.conf's directory.
std::string default_plugstack_path(std::string_view slurm_conf_path);

}  // namespace sddp
