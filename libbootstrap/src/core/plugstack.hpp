// SPDX-License-Identifier: Apache-2.0
// The plugin's line in a plugstack.conf, so that `slurm-ddp env` applies the site's arguments
// exactly as slurmstepd hands them to the plugin.
//
// Grammar (Slurm's spank(8)): one `required|optional PATH [ARGS...]` or `include GLOB` per line,
// `#` starts a comment. The plugin's line is the one whose PATH ends in kPluginFileName.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sddp {

inline constexpr const char* kPluginFileName = "spank_ddp.so";

struct PlugstackScan {
    std::optional<std::vector<std::string>> plugin_args;  // the plugin's line, when present
    std::vector<std::string> includes;                    // `include` patterns, in order
};

// Reads one file's text. Only the first line naming the plugin counts, as in Slurm (a second
// one would load it twice and Slurm refuses that).
PlugstackScan scan_plugstack(std::string_view text);

}  // namespace sddp
