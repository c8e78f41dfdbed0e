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

#include "core/base/result.hpp"
#include "core/gpu/device_choice.hpp"
#include "core/options/option_params.hpp"
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

// cudaGetDeviceCount, the choice (core/gpu/device_choice.hpp; device_count is filled in here),
// cudaSetDevice, cudaDeviceGetPCIBusId.
Result<GpuSelection> select_gpu(DeviceChoiceInput req);

struct CommParams {
    int rank = 0;
    int world_size = 1;
    int node_color = 0;  // node index: ranks with one color share the local communicator
    bool local_comm = true;
    int unique_ids = 1;                       // > 1: ncclCommInitRankScalable
    std::optional<std::string> nccl_comm_id;  // NCCL_COMM_ID as the caller's environment has it
    std::optional<std::string> nccl_comm_blocking;  // NCCL_COMM_BLOCKING, likewise
    std::chrono::milliseconds timeout{kDefaultRendezvousTimeout};
    std::string host;  // this rank's host, named in the agreed error
    // This rank could not set its device up (select_gpu failed): shared with every rank before
    // NCCL init, so that all of them fail at once naming this rank.
    std::optional<Error> setup_error;
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

// Every rank first agrees over `t` that all ranks are ready (setup_error, NCCL_COMM_ID, the
// entry points; nccl_agreement.hpp); rank 0 (and, for unique_ids > 1, the id roots) creates the
// ids; they are broadcast over `t`; every rank initialises a non-blocking communicator and polls
// it against the deadline, then splits blocking children from it; and the ranks agree on the
// outcome, so that every rank returns the same error, naming the rank that failed.
Result<std::unique_ptr<Comms>> create_comms(Transport& t, const CommParams& p);

// The NCCL and CUDA runtime files this process uses, loading them as load() does (a process
// that holds none looks where a PyTorch of its Python environment would, os/library_search.hpp):
// `slurm-ddp check` names them. The error names every file tried.
struct LoadedLibraries {
    std::string nccl_path;
    std::string nccl_version;  // "2.28.9"
    std::string cuda_runtime_path;
};
Result<LoadedLibraries> loaded_libraries();

// cudaDeviceGetPCIBusId of visible device `device` (lower case), without choosing or setting it.
Result<std::string> pci_bus_id(int device);

// One-element all-reduce on a blocking communicator (`slurm-ddp check --nccl`): this rank's
// value rank + 1 copied to a device buffer on `device`, ncclAllReduce(sum) on a stream of its
// own, the stream polled to the deadline, the result copied back and compared with
// world_size * (world_size + 1) / 2. A call that does not return by the deadline (NCCL connects
// the peers on the first collective) is left running on its thread, and `*inside_nccl` says so:
// the caller must then neither abort nor finalise `comm` (one thread per communicator: NCCL
// would free it under that thread), and leaves it to the process's exit.
struct AllReduceOutcome {
    long long got = 0;
    long long expected = 0;
};
Result<AllReduceOutcome> check_allreduce(void* comm, int device, int rank, int world_size,
                                         std::chrono::milliseconds timeout,
                                         bool* inside_nccl = nullptr);

}  // namespace sddp::nccl
