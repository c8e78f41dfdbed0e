// SPDX-License-Identifier: Apache-2.0
// The NCCL layer of a build without nccl.h: everything says so, with the way out.
#include "nccl/nccl_layer.hpp"

namespace sddp::nccl {
namespace {

Error unsupported() {
    return make_error(Errc::unsupported,
                      "this libslurm_ddp was built without the NCCL layer (nccl.h and the CUDA "
                      "runtime headers were not found at build time), so it cannot create a NCCL "
                      "communicator; initialise with no_nccl (identity and rendezvous only), or "
                      "rebuild with them installed (-DSDDP_WITH_NCCL=ON -DSDDP_CUDA_ROOT=...)");
}

}  // namespace

bool built() {
    return false;
}

Status load() {
    return unsupported();
}

int version() {
    return 0;
}

Result<GpuSelection> select_gpu(DeviceChoiceInput) {
    return unsupported();
}

Result<std::unique_ptr<Comms>> create_comms(Transport&, const CommParams&) {
    return unsupported();
}

}  // namespace sddp::nccl
