// SPDX-License-Identifier: Apache-2.0
// Where to look for a library that a user's PyTorch would load: NCCL and the CUDA runtime.
//
// Why: a process that did not load them itself (the slurm-ddp CLI, a C++ trainer started from
// an activated Python environment) should find the same files a PyTorch of that environment
// uses, the ones of NVIDIA's wheels (nvidia-nccl-cu12, nvidia-cuda-runtime, ...), which are on
// no loader path: PyTorch names them by RPATH ($ORIGIN/../../nvidia/nccl/lib).
#pragma once

#include <string>
#include <vector>

#include "core/base/env_lookup.hpp"

namespace sddp {

// The site-packages (or dist-packages) folders of the active Python environment, those that
// exist, in order: $VIRTUAL_ENV's, then $CONDA_PREFIX's, then those of the python3 first on
// $PATH (its prefix, the folder above its bin/; for /usr/bin/python3 also /usr/local's), then
// the user's own ($HOME/.local, pip install --user).
std::vector<std::string> python_site_packages(const EnvLookup& env);

// The candidates for one library, for SharedLibrary::open, in order: `file` in each folder of
// $LD_LIBRARY_PATH that has it (the user's explicit choice), then `site/<wheel_dir>/file` for
// each folder of python_site_packages and each of `wheel_dirs` (e.g. "nvidia/nccl/lib") that
// has it, then `file` itself for the loader's own search (ldconfig, the system's folders).
std::vector<std::string> library_candidates(const EnvLookup& env, const std::string& file,
                                            const std::vector<std::string>& wheel_dirs);

}  // namespace sddp
