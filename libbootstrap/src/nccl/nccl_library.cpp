// SPDX-License-Identifier: Apache-2.0
#include "nccl/nccl_library.hpp"

#include <dlfcn.h>
#include <link.h>

#include <vector>

namespace sddp::nccl {
namespace {

constexpr const char* kNcclSoname = "libnccl.so.2";

std::string loaded_path(void* handle, const std::string& fallback) {
    link_map* map = nullptr;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && *map->l_name) {
        return map->l_name;
    }
    return fallback;
}

template <typename Fn>
bool bind(void* handle, const char* name, Fn*& out) {
    out = reinterpret_cast<Fn*>(dlsym(handle, name));
    return out != nullptr;
}

Error missing(const std::string& what, const std::string& why, const std::string& fix) {
    return make_error(Errc::unsupported, what + ": " + why + "; " + fix);
}

Result<NcclApi> load_nccl() {
    void* h = dlopen(kNcclSoname, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char* e = dlerror();
        return missing("NCCL is not available on this node",
                       std::string("dlopen(\"") + kNcclSoname + "\") failed: " + (e ? e : "?"),
                       "install NCCL >= " + version_text(kMinNcclVersion) +
                           " (libnccl2) where the loader finds it (ldconfig or "
                           "LD_LIBRARY_PATH), or initialise with no_nccl for CPU-only work");
    }
    NcclApi a;
    a.path = loaded_path(h, kNcclSoname);
    // The version first: an old NCCL lacks later entry points, and its version is the message.
    if (!bind(h, "ncclGetVersion", a.GetVersion) || a.GetVersion(&a.version) != ncclSuccess) {
        return missing("NCCL at " + a.path + " is unusable", "ncclGetVersion is missing or failed",
                       "install NCCL >= " + version_text(kMinNcclVersion));
    }
    SDDP_CHECK(check_nccl_version(a.version, a.path));
    const bool all =
        bind(h, "ncclGetUniqueId", a.GetUniqueId) &&
        bind(h, "ncclCommInitRankConfig", a.CommInitRankConfig) &&
        bind(h, "ncclCommSplit", a.CommSplit) &&
        bind(h, "ncclCommGetAsyncError", a.CommGetAsyncError) &&
        bind(h, "ncclCommFinalize", a.CommFinalize) && bind(h, "ncclCommDestroy", a.CommDestroy) &&
        bind(h, "ncclCommAbort", a.CommAbort) && bind(h, "ncclAllReduce", a.AllReduce) &&
        bind(h, "ncclGetErrorString", a.GetErrorString) &&
        bind(h, "ncclGetLastError", a.GetLastError);
    if (!all) {
        const char* e = dlerror();
        return missing("NCCL " + version_text(a.version) + " at " + a.path + " is incomplete",
                       e ? e : "an entry point is missing",
                       "install NCCL >= " + version_text(kMinNcclVersion));
    }
    (void)bind(h, "ncclCommInitRankScalable", a.CommInitRankScalable);  // optional: 2.23+
    return a;
}

Result<CudaApi> load_cuda() {
    // The runtime of the CUDA this was built with first; the few calls used here have kept
    // their signatures across majors, so a node with another major's runtime works too.
    std::vector<std::string> names{"libcudart.so." + std::to_string(CUDART_VERSION / 1000)};
    for (const char* n : {"libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0"}) {
        if (names.front() != n) names.emplace_back(n);
    }
    std::string tried;
    void* h = nullptr;
    for (const std::string& n : names) {
        h = dlopen(n.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (h) break;
        tried += (tried.empty() ? "" : ", ") + n;
    }
    if (!h) {
        return missing("the CUDA runtime is not available on this node",
                       "none of " + tried + " could be loaded",
                       "install the CUDA runtime (libcudart) where the loader finds it, or "
                       "initialise with no_nccl for CPU-only work");
    }
    CudaApi a;
    a.path = loaded_path(h, names.front());
    const bool all =
        bind(h, "cudaGetDeviceCount", a.GetDeviceCount) && bind(h, "cudaSetDevice", a.SetDevice) &&
        bind(h, "cudaDeviceGetPCIBusId", a.DeviceGetPCIBusId) &&
        bind(h, "cudaGetErrorName", a.GetErrorName) &&
        bind(h, "cudaGetErrorString", a.GetErrorString) && bind(h, "cudaMalloc", a.Malloc) &&
        bind(h, "cudaFree", a.Free) && bind(h, "cudaMemcpy", a.Memcpy) &&
        bind(h, "cudaStreamCreate", a.StreamCreate) &&
        bind(h, "cudaStreamDestroy", a.StreamDestroy) && bind(h, "cudaStreamQuery", a.StreamQuery);
    if (!all) {
        return missing("the CUDA runtime at " + a.path + " is incomplete",
                       "an entry point is missing", "reinstall the CUDA runtime");
    }
    return a;
}

}  // namespace

std::string version_text(int code) {
    // NCCL_VERSION(X,Y,Z) is X*10000+Y*100+Z from 2.9 on, X*1000+Y*100+Z before.
    const bool old = code < 20900;
    const int major = old ? code / 1000 : code / 10000;
    const int rest = old ? code % 1000 : code % 10000;
    return std::to_string(major) + "." + std::to_string(rest / 100) + "." +
           std::to_string(rest % 100);
}

Status check_nccl_version(int code, const std::string& path) {
    if (code >= kMinNcclVersion) return ok_status();
    return make_error(Errc::unsupported,
                      "NCCL " + version_text(code) + " at " + path +
                          " is too old: slurm-ddp needs " + version_text(kMinNcclVersion) +
                          " or newer (ncclCommSplit with splitShare). If this process loaded an "
                          "older libnccl.so.2 first (a PyTorch wheel's, or one on "
                          "LD_LIBRARY_PATH), that copy is the one in use: upgrade it or put a "
                          "newer NCCL first");
}

Result<const NcclApi*> nccl_api() {
    static const Result<NcclApi> loaded = load_nccl();
    if (!loaded) return loaded.error();
    return &*loaded;
}

Result<const CudaApi*> cuda_api() {
    static const Result<CudaApi> loaded = load_cuda();
    if (!loaded) return loaded.error();
    return &*loaded;
}

}  // namespace sddp::nccl
