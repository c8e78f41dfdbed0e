// SPDX-License-Identifier: Apache-2.0
#include "version_report.hpp"

#ifndef SDDP_VERSION_STRING
#error "SDDP_VERSION_STRING must be defined by the build (tools/CMakeLists.txt)"
#endif
#ifndef SDDP_SLURM_VERSION_STRING
#define SDDP_SLURM_VERSION_STRING ""
#endif

namespace sddp::tools {

std::string version_report() {
    std::string out = "slurm-ddp " SDDP_VERSION_STRING "\n";
    out += "library: libslurm_ddp " SDDP_VERSION_STRING " (ABI " SDDP_ABI_VERSION_STRING ")\n";
    const std::string slurm = SDDP_SLURM_VERSION_STRING;
    if (slurm.empty()) {
        out += "Slurm: none (built without Slurm's headers: no SPANK plugin)\n";
    } else {
        // A plugin loads only under the Slurm release whose headers built it.
        out += "Slurm: built for " + slurm + " (the plugin loads only under Slurm " +
               slurm.substr(0, slurm.rfind('.')) + ".x)\n";
    }
#if SDDP_NCCL_BUILT
    // Only NCCL's headers are compiled in: libnccl.so.2 and the CUDA runtime are loaded when a
    // program asks for a communicator (the ones the process already holds first).
    out += "NCCL: supported, loaded at run time (libnccl.so.2, or the one the process holds)\n";
#else
    out += "NCCL: not built\n";
#endif
    return out;
}

}  // namespace sddp::tools
