// SPDX-License-Identifier: Apache-2.0
// The GPU checks of `slurm-ddp check` in a build without nccl.h: they say so.
#include "nccl/nccl_layer.hpp"

namespace sddp::nccl {
namespace {

Error unsupported() {
    return make_error(Errc::unsupported,
                      "this slurm-ddp was built without the NCCL layer (nccl.h and the CUDA "
                      "runtime headers were not found at build time)");
}

}  // namespace

Result<LoadedLibraries> loaded_libraries() {
    return unsupported();
}

Result<std::string> pci_bus_id(int) {
    return unsupported();
}

Result<AllReduceOutcome> check_allreduce(void*, int, int, int, std::chrono::milliseconds,
                                         bool* inside_nccl) {
    if (inside_nccl) *inside_nccl = false;
    return unsupported();
}

}  // namespace sddp::nccl
