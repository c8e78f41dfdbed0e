// The NCCL layer as the API sees it: no CUDA or NCCL types, so the API compiles without them.
//
// Implemented in src/nccl/*.cpp when the build has NCCL (SDDP_HAVE_NCCL), and by
// src/api/nccl_unavailable.cpp otherwise, where every entry returns Errc::unsupported.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "core/result.hpp"
#include "rendezvous/transport.hpp"

namespace sddp::nccl {

bool available();

struct GpuRequest {
    std::optional<int> ddp_device;  // SLURM_DDP_DEVICE
    int local_rank = 0;
    bool locality_known = true;
    std::optional<std::string> visible_devices;  // CUDA_VISIBLE_DEVICES, for messages
};

struct GpuSelection {
    int device = -1;
    std::string pci_bus_id;  // lower case, "0000:3b:00.0"
};

// cudaGetDeviceCount, the choice (core/device_choice.hpp), cudaSetDevice, cudaDeviceGetPCIBusId.
Result<GpuSelection> select_gpu(const GpuRequest& req);

struct CommParams {
    int rank = 0;
    int world_size = 1;
    int node_color = 0;  // node index: ranks with one color share the local communicator
    bool local_comm = true;
    int unique_ids = 1;  // > 1: ncclCommInitRankScalable
    std::chrono::milliseconds timeout{std::chrono::minutes(5)};
};

class Comms {
  public:
    virtual ~Comms() = default;       // aborts whatever was not finalised
    virtual void* world() const = 0;  // ncclComm_t
    virtual void* local() const = 0;  // ncclComm_t or nullptr
    // ncclCommFinalize + ncclCommDestroy, bounded by `timeout`; ncclCommAbort when it runs out.
    virtual Status finalize(std::chrono::milliseconds timeout) = 0;
    virtual void abort() = 0;  // ncclCommAbort; never blocks on peers
};

// Rank 0 (and, for unique_ids > 1, the id roots) creates the ids; they are broadcast over `t`;
// every rank initialises non-blocking and polls against the deadline.
Result<std::unique_ptr<Comms>> create_comms(Transport& t, const CommParams& p);

}  // namespace sddp::nccl
