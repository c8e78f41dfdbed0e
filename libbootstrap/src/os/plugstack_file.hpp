// SPDX-License-Identifier: Apache-2.0
// The site's plugstack.conf as Slurm finds and reads it (core/slurm/plugstack.hpp has the rules),
// so that `slurm-ddp env` applies the plugin arguments slurmstepd would hand to the plugin.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/base/env_lookup.hpp"

namespace sddp {

// Where Slurm looks for slurm.conf: SLURM_CONF, else the copy slurmd keeps on a configless node,
// else the compiled-in default.
inline constexpr const char* kConfiglessSlurmConf = "/run/slurm/conf/slurm.conf";
inline constexpr const char* kDefaultSlurmConf = "/etc/slurm/slurm.conf";

// The plugstack.conf Slurm would load: slurm.conf's PlugStackConfig, else plugstack.conf beside
// slurm.conf. `*from` says how it was found, for messages.
std::string site_plugstack_path(const EnvLookup& env, std::string* from);

// The arguments on the plugin's line in `path` and the files it includes, read in Slurm's order;
// nullopt with `why` set when no line names the plugin or `path` cannot be read.
std::optional<std::vector<std::string>> plugstack_plugin_arguments(const std::string& path,
                                                                   std::string* why);

}  // namespace sddp
