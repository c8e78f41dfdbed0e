// SPDX-License-Identifier: Apache-2.0
#include "nccl/nccl_library.hpp"

#include <dlfcn.h>
#include <link.h>

#include <cstdlib>

#include <optional>
#include <vector>

#include "core/contract.hpp"

namespace sddp::nccl {
namespace {

constexpr const char* kNcclSoname = "libnccl.so.2";

// The NCCL library this process uses: libnccl.so.2 unless kNcclLibraryVar names another.
std::string nccl_library_name() {
    const char* v = std::getenv(contract::kNcclLibraryVar);
    return v && *v ? v : kNcclSoname;
}

// RCCL (AMD) pairs with the HIP runtime, whose entry points are the CUDA runtime's with "hip"
// for "cuda", the same signatures and, for the few used here, the same error codes but one.
bool is_rccl(const std::string& name) {
    return name.find("rccl") != std::string::npos;
}

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
    // The copy the process already holds (the one PyTorch brought from its nvidia-nccl wheel):
    // two NCCLs in one process would not share communicators. Else the system's, by SONAME.
    const std::string name = nccl_library_name();
    void* h = dlopen(name.c_str(), RTLD_NOW | RTLD_NOLOAD);
    if (!h) h = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char* e = dlerror();
        return missing("NCCL is not available on this node",
                       "dlopen(\"" + name + "\") failed: " + (e ? e : "?"),
                       "install NCCL >= " + version_text(kMinNcclVersion) +
                           " (libnccl2) where the loader finds it (ldconfig or "
                           "LD_LIBRARY_PATH), or initialise with no_nccl for CPU-only work");
    }
    NcclApi a;
    a.path = loaded_path(h, name);
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

Result<CudaApi> bind_cuda(void* h, const std::string& path, const std::string& prefix) {
    CudaApi a;
    a.path = path;
    if (prefix == "hip") a.not_ready = static_cast<cudaError_t>(600);  // hipErrorNotReady
    const auto sym = [&](const char* n) { return prefix + n; };
    const bool all = bind(h, sym("GetDeviceCount").c_str(), a.GetDeviceCount) &&
                     bind(h, sym("SetDevice").c_str(), a.SetDevice) &&
                     bind(h, sym("DeviceGetPCIBusId").c_str(), a.DeviceGetPCIBusId) &&
                     bind(h, sym("GetErrorName").c_str(), a.GetErrorName) &&
                     bind(h, sym("GetErrorString").c_str(), a.GetErrorString) &&
                     bind(h, sym("Malloc").c_str(), a.Malloc) &&
                     bind(h, sym("Free").c_str(), a.Free) &&
                     bind(h, sym("Memcpy").c_str(), a.Memcpy) &&
                     bind(h, sym("StreamCreate").c_str(), a.StreamCreate) &&
                     bind(h, sym("StreamDestroy").c_str(), a.StreamDestroy) &&
                     bind(h, sym("StreamQuery").c_str(), a.StreamQuery);
    if (!all) {
        return missing("the CUDA runtime at " + a.path + " is incomplete",
                       "an entry point is missing", "reinstall the CUDA runtime");
    }
    return a;
}

}  // namespace

std::vector<std::string> cudart_sonames(int built_major) {
    std::vector<std::string> names{"libcudart.so." + std::to_string(built_major)};
    for (const char* n : {"libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0"}) {
        if (names.front() != n) names.emplace_back(n);
    }
    return names;
}

Result<CudaApi> load_cuda_runtime(const std::vector<std::string>& sonames,
                                  const std::string& prefix) {
    // The runtime the process already holds (a PyTorch cu12 process has libcudart.so.12): a
    // second runtime would keep its own device state, and the driver may not support ours.
    for (const std::string& n : sonames) {
        if (void* h = dlopen(n.c_str(), RTLD_NOW | RTLD_NOLOAD))
            return bind_cuda(h, loaded_path(h, n), prefix);
    }
    // The few calls used here have kept their signatures across majors, so any runtime the
    // driver supports works: a runtime newer than the driver answers its first call with
    // "insufficient driver", and the next major is tried.
    // When every one does (no driver at all answers the same), the first is kept: GPU
    // selection then reports the error with its hint.
    std::string tried;
    std::optional<CudaApi> first;
    for (const std::string& n : sonames) {
        void* h = dlopen(n.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            tried += (tried.empty() ? "" : ", ") + n;
            continue;
        }
        auto api = bind_cuda(h, loaded_path(h, n), prefix);
        if (!api) return api.error();
        int count = 0;
        if (api->GetDeviceCount(&count) != cudaErrorInsufficientDriver) return api;
        if (!first) first = std::move(*api);
        // Left loaded: a runtime that has started may not be unloaded safely.
    }
    if (first) return *first;
    return missing("the CUDA runtime is not available on this node",
                   "none of " + tried + " could be loaded",
                   "install the CUDA runtime (libcudart) where the loader finds it, or "
                   "initialise with no_nccl for CPU-only work");
}

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
    static const Result<CudaApi> loaded =
        is_rccl(nccl_library_name())
            ? load_cuda_runtime({"libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5"}, "hip")
            : load_cuda_runtime(cudart_sonames(CUDART_VERSION / 1000));
    if (!loaded) return loaded.error();
    return &*loaded;
}

}  // namespace sddp::nccl
