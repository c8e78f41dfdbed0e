// The NCCL layer of a build without NCCL: everything says so, with the way out.
#include "nccl/nccl_layer.hpp"

namespace sddp::nccl {
namespace {

Error unsupported() {
    return make_error(Errc::unsupported,
                      "this libslurm_ddp was built without NCCL, so it cannot create a NCCL "
                      "communicator; initialise with no_nccl (identity and rendezvous only), or "
                      "rebuild with CUDA and NCCL installed (-DSDDP_WITH_NCCL=ON "
                      "-DSDDP_CUDA_ROOT=...)");
}

}  // namespace

bool available() {
    return false;
}

Result<GpuSelection> select_gpu(const GpuRequest&) {
    return unsupported();
}

Result<std::unique_ptr<Comms>> create_comms(Transport&, const CommParams&) {
    return unsupported();
}

}  // namespace sddp::nccl
