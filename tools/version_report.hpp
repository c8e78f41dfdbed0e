// SPDX-License-Identifier: Apache-2.0
// `slurm-ddp --version`: what an admin needs to match a build to a site. Which library release
// this is, which Slurm release it was built for (Slurm loads the plugin only under that one), and
// whether the NCCL layer is there.
#pragma once

#include <string>

namespace sddp::tools {

// Several "key: value" lines, ending in a newline.
std::string version_report();

}  // namespace sddp::tools
