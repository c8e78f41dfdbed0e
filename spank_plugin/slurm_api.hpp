// SPDX-License-Identifier: Apache-2.0
// Slurm API calls the plugin makes from slurmstepd, looked up at run time.
//
// srun, sbatch and slurmstepd export libslurm's API to plugins, but a host that does not (the
// project's plugin host, or a future Slurm) must still load the plugin: a missing symbol turns
// into an error return here, never into a failed dlopen that would break every job.
#pragma once

#include <dlfcn.h>

#include <string>

extern "C" {
#include <slurm/slurm.h>
}

namespace sddp::plugin {

// The function named `name` with the type the headers declare for `decl`, or nullptr.
template <typename Fn>
Fn* slurm_api(Fn* /*decl*/, const char* name) {
    return reinterpret_cast<Fn*>(dlsym(RTLD_DEFAULT, name));
}
#define SDDP_SLURM_API(fn) ::sddp::plugin::slurm_api(static_cast<decltype(&fn)>(nullptr), #fn)

// slurm_strerror(code), or the number where the host has no slurm_strerror.
inline std::string slurm_error_text(int code) {
    if (auto* text = SDDP_SLURM_API(slurm_strerror)) return text(code);
    return "Slurm error " + std::to_string(code);
}

}  // namespace sddp::plugin
