// SPDX-License-Identifier: Apache-2.0
// The NCCL layer as the API sees it: no CUDA or NCCL types, so the API compiles without them.
//
// Implemented in src/nccl/*.cpp when nccl.h and the CUDA runtime headers exist at build time
// (SDDP_HAVE_NCCL); NCCL and libcudart themselves are loaded at run time (nccl_library.hpp),
// so whether NCCL can be used is decided on the node. src/api/nccl_unavailable.cpp stands in
// for builds without the headers, where every entry returns Errc::unsupported.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "core/device_choice.hpp"
#include "core/result.hpp"
#include "rendezvous/transport.hpp"

namespace sddp::nccl {

// Whether this build has the layer at all (headers found at build time).
bool built();
// Loads NCCL and the CUDA runtime (once per process): Errc::unsupported naming the missing or
// too old library. Cheap after the first call.
Status load();
// ncclGetVersion of the loaded NCCL (22809 for 2.28.9); 0 when load() fails.
int version();

struct GpuSelection {
    int device = -1;
    std::string pci_bus_id;  // lower case, "0000:3b:00.0"
};

// cudaGetDeviceCount, the choice (core/device_choice.hpp; device_count is filled in here),
// cudaSetDevice, cudaDeviceGetPCIBusId.
Result<GpuSelection> select_gpu(DeviceChoiceInput req);

struct CommParams {
    int rank = 0;
    int world_size = 1;
    int node_color = 0;  // node index: ranks with one color share the local communicator
    bool local_comm = true;
    int unique_ids = 1;                       // > 1: ncclCommInitRankScalable
    std::optional<std::string> nccl_comm_id;  // NCCL_COMM_ID as the caller's environment has it
    std::chrono::milliseconds timeout{std::chrono::minutes(5)};
};

class Comms {
  public:
    virtual ~Comms() = default;       // aborts whatever was not finalised
    virtual void* world() const = 0;  // ncclComm_t, blocking
    virtual void* local() const = 0;  // ncclComm_t (blocking) or nullptr
    // ncclCommFinalize + ncclCommDestroy, bounded by `timeout` where NCCL allows (see
    // nccl_comms.cpp); ncclCommAbort when it runs out or destroy fails.
    virtual Status finalize(std::chrono::milliseconds timeout) = 0;
    virtual void abort() = 0;  // ncclCommAbort; never blocks on peers
};

// Rank 0 (and, for unique_ids > 1, the id roots) creates the ids; they are broadcast over `t`;
// every rank initialises a non-blocking communicator and polls it against the deadline, then
// hands out blocking children split from it.
Result<std::unique_ptr<Comms>> create_comms(Transport& t, const CommParams& p);

}  // namespace sddp::nccl
