// SPDX-License-Identifier: Apache-2.0
// The one-element all-reduce of `slurm-ddp check --nccl`, the bus id of a visible GPU, and the
// files the check names.
#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <optional>
#include <thread>

#include "nccl/nccl_bounded.hpp"
#include "nccl/nccl_layer.hpp"
#include "nccl/nccl_library.hpp"
#include "nccl/nccl_wait.hpp"

namespace sddp::nccl {
namespace {

std::string seconds(std::chrono::milliseconds t) {
    return std::to_string(t.count() / 1000) + "." + std::to_string(t.count() % 1000 / 100) + " s";
}

std::string cuda_text(const CudaApi& cuda, const std::string& call, cudaError_t e) {
    return call + " failed: " + cuda.GetErrorName(e) + " (" + cuda.GetErrorString(e) + ")";
}

// What the worker thread hands back; it owns its copy of everything it touches, so that a
// worker left behind at the deadline never reaches into the caller's stack.
struct Shared {
    std::optional<Error> error;
    AllReduceOutcome out;
};

// A device buffer and a stream that the all-reduce's failure paths free by themselves. While
// the all-reduce may still run on the GPU (timed out, or failed asynchronously) they are kept
// instead: cudaFree would wait for the device, and NCCL's kernel still writes the buffer until
// the communicator is aborted; a few bytes left to the process's exit are the lesser harm.
class DeviceBuffer {
  public:
    explicit DeviceBuffer(const CudaApi& cuda) : cuda_(cuda) {}
    ~DeviceBuffer() {
        if (p_ && !kept_) (void)cuda_.Free(p_);
    }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    cudaError_t allocate(std::size_t n) { return cuda_.Malloc(&p_, n); }
    void* get() const { return p_; }
    void keep() { kept_ = true; }

  private:
    const CudaApi& cuda_;
    void* p_ = nullptr;
    bool kept_ = false;
};

class Stream {
  public:
    explicit Stream(const CudaApi& cuda) : cuda_(cuda) {}
    ~Stream() {
        if (s_ && !kept_) (void)cuda_.StreamDestroy(s_);
    }
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;
    cudaError_t create() { return cuda_.StreamCreate(&s_); }
    cudaStream_t get() const { return s_; }
    void keep() { kept_ = true; }

  private:
    const CudaApi& cuda_;
    cudaStream_t s_ = nullptr;
    bool kept_ = false;
};

void run_allreduce(const NcclApi& nccl, const CudaApi& cuda, ncclComm_t comm, int device, int rank,
                   int world_size, Clock::time_point deadline, std::chrono::milliseconds timeout,
                   Shared& sh) {
    const auto fail = [&](Errc c, std::string m) { sh.error = make_error(c, std::move(m)); };
    // The current device is per thread: this one sets its own.
    if (cudaError_t e = cuda.SetDevice(device); e != cudaSuccess)
        return fail(Errc::io, cuda_text(cuda, "cudaSetDevice(" + std::to_string(device) + ")", e));
    DeviceBuffer buf(cuda);
    if (cudaError_t e = buf.allocate(sizeof(std::int64_t)); e != cudaSuccess)
        return fail(Errc::io, cuda_text(cuda, "cudaMalloc(8 bytes)", e));
    const std::int64_t mine = rank + 1;
    if (cudaError_t e = cuda.Memcpy(buf.get(), &mine, sizeof mine, cudaMemcpyHostToDevice);
        e != cudaSuccess) {
        return fail(Errc::io, cuda_text(cuda, "cudaMemcpy (host to device)", e));
    }
    Stream stream(cuda);
    if (cudaError_t e = stream.create(); e != cudaSuccess)
        return fail(Errc::io, cuda_text(cuda, "cudaStreamCreate", e));
    const ncclResult_t r =
        nccl.AllReduce(buf.get(), buf.get(), 1, ncclInt64, ncclSum, comm, stream.get());
    if (r != ncclSuccess) {
        return fail(Errc::io, "ncclAllReduce failed: " + nccl_error_text(nccl, r, comm));
    }
    const auto in_flight = [&] {
        buf.keep();
        stream.keep();
    };
    std::chrono::microseconds pause{0};
    for (;;) {
        const cudaError_t q = cuda.StreamQuery(stream.get());
        if (q == cudaSuccess) break;
        if (q != cuda.not_ready)
            return fail(Errc::io, cuda_text(cuda, "cudaStreamQuery after ncclAllReduce", q));
        // A peer's failure shows on the communicator, not on the stream.
        ncclResult_t state = ncclSuccess;
        if (nccl.CommGetAsyncError(comm, &state) == ncclSuccess && state != ncclSuccess &&
            state != ncclInProgress) {
            in_flight();
            return fail(Errc::io, "ncclAllReduce failed: " + nccl_error_text(nccl, state, comm));
        }
        if (Clock::now() >= deadline) {
            in_flight();
            return fail(Errc::timeout,
                        "the all-reduce was enqueued but did not complete within " +
                            seconds(timeout) +
                            ": a peer did not reach it, or the GPUs cannot reach each other "
                            "(NCCL_DEBUG=INFO shows the transport NCCL chose)");
        }
        pause = next_poll_pause(pause);
        std::this_thread::sleep_for(pause);
    }
    std::int64_t got = 0;
    if (const cudaError_t back = cuda.Memcpy(&got, buf.get(), sizeof got, cudaMemcpyDeviceToHost);
        back != cudaSuccess)
        return fail(Errc::io, cuda_text(cuda, "cudaMemcpy (device to host)", back));
    sh.out.got = got;
    sh.out.expected = static_cast<long long>(world_size) * (world_size + 1) / 2;
}

}  // namespace

Result<LoadedLibraries> loaded_libraries() {
    SDDP_TRY(nccl, nccl_api());
    SDDP_TRY(cuda, cuda_api());
    return LoadedLibraries{nccl->path, version_text(nccl->version), cuda->path};
}

Result<std::string> pci_bus_id(int device) {
    SDDP_TRY(cuda_ptr, cuda_api());
    const CudaApi& cuda = *cuda_ptr;
    std::array<char, 64> bus{};
    if (const cudaError_t e =
            cuda.DeviceGetPCIBusId(bus.data(), static_cast<int>(bus.size()), device);
        e != cudaSuccess) {
        return make_error(
            Errc::io, cuda_text(cuda, "cudaDeviceGetPCIBusId(" + std::to_string(device) + ")", e));
    }
    std::string s = bus.data();
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

Result<AllReduceOutcome> check_allreduce(void* comm, int device, int rank, int world_size,
                                         std::chrono::milliseconds timeout, bool* inside_nccl) {
    if (inside_nccl) *inside_nccl = false;
    SDDP_TRY(nccl_ptr, nccl_api());
    SDDP_TRY(cuda_ptr, cuda_api());
    if (!comm) return make_error(Errc::internal, "no NCCL communicator to run the all-reduce on");
    const auto deadline = Clock::now() + timeout;
    auto sh = std::make_shared<Shared>();
    const NcclApi& nccl = *nccl_ptr;
    const CudaApi& cuda = *cuda_ptr;  // both live for the process (nccl_library.cpp)
    BoundedCall call([&nccl, &cuda, c = static_cast<ncclComm_t>(comm), device, rank, world_size,
                      deadline, timeout, sh] {
        run_allreduce(nccl, cuda, c, device, rank, world_size, deadline, timeout, *sh);
    });
    // The worker polls to the deadline itself; the margin is for a call that blocks instead.
    if (!call.wait_until(deadline + std::chrono::milliseconds(500)) && !call.abandon()) {
        if (inside_nccl) *inside_nccl = true;
        return make_error(Errc::timeout,
                          "ncclAllReduce did not return within " + seconds(timeout) +
                              " (NCCL connects the peers on the first collective: a peer did not "
                              "reach it, or cannot be reached; NCCL_DEBUG=INFO shows where it "
                              "stopped)");
    }
    if (sh->error) return *sh->error;
    if (sh->out.got != sh->out.expected) {
        return make_error(Errc::internal,
                          "the all-reduce returned " + std::to_string(sh->out.got) + ", not " +
                              std::to_string(sh->out.expected) + " (the sum of rank + 1 over " +
                              std::to_string(world_size) +
                              " ranks): the GPUs or NCCL computed a wrong result; check the "
                              "driver and NCCL versions, and run nvidia-smi -q for GPU errors");
    }
    return sh->out;
}

}  // namespace sddp::nccl
