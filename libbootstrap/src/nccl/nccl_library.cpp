// SPDX-License-Identifier: Apache-2.0
#include "nccl/nccl_library.hpp"

#include <optional>
#include <vector>

#include "core/contract/contract.hpp"
#include "os/library_search.hpp"
#include "os/process_env.hpp"
#include "os/shared_library.hpp"

namespace sddp::nccl {
namespace {

constexpr const char* kNcclSoname = "libnccl.so.2";

// The NCCL library this process uses: libnccl.so.2 unless kNcclLibraryVar names another.
std::string nccl_library_name(const EnvLookup& env) {
    auto v = env(contract::kNcclLibraryVar);
    return v && !v->empty() ? *v : kNcclSoname;
}

// RCCL (AMD) pairs with the HIP runtime, whose entry points are the CUDA runtime's with "hip"
// for "cuda", the same signatures and, for the few used here, the same error codes but one.
bool is_rccl(const std::string& name) {
    return name.find("rccl") != std::string::npos;
}

Error missing(const std::string& what, const std::string& why, const std::string& fix) {
    return make_error(Errc::unsupported, what + ": " + why + "; " + fix);
}

// What the Python environments searched were, for a message: "(none)" or "a, b".
std::string sites_text(const EnvLookup& env) {
    std::string out;
    for (const auto& s : python_site_packages(env)) out += (out.empty() ? "" : ", ") + s;
    return out.empty() ? "no Python environment found (VIRTUAL_ENV, CONDA_PREFIX, python3 on PATH)"
                       : "Python environments searched: " + out;
}

Result<NcclApi> load_nccl(const EnvLookup& env) {
    // The copy the process already holds (the one PyTorch brought from its nvidia-nccl wheel):
    // two NCCLs in one process would not share communicators. Else the one a PyTorch of this
    // environment would load (library_search.hpp), else the system's, by SONAME.
    const std::string name = nccl_library_name(env);
    const auto candidates = name == kNcclSoname ? library_candidates(env, name, {"nvidia/nccl/lib"})
                                                : std::vector<std::string>{name};
    auto lib = SharedLibrary::open(candidates);
    if (!lib) {
        return missing(
            "NCCL is not available on this node",
            "tried " + lib.error().message + (name == kNcclSoname ? "; " + sites_text(env) : ""),
            "install NCCL >= " + version_text(kMinNcclVersion) +
                " (libnccl2, or the nvidia-nccl-cu12/cu13 wheel in the Python "
                "environment) where the loader finds it (ldconfig or "
                "LD_LIBRARY_PATH), point " +
                contract::kNcclLibraryVar + " at it, or initialise with no_nccl for CPU-only work");
    }
    NcclApi a;
    a.path = lib->path();
    // The version first: an old NCCL lacks later entry points, and its version is the message.
    if (!lib->bind("ncclGetVersion", a.GetVersion) || a.GetVersion(&a.version) != ncclSuccess) {
        return missing("NCCL at " + a.path + " is unusable", "ncclGetVersion is missing or failed",
                       "install NCCL >= " + version_text(kMinNcclVersion));
    }
    SDDP_CHECK(check_nccl_version(a.version, a.path));
    std::string absent;
    lib->bind("ncclGetUniqueId", a.GetUniqueId, &absent);
    lib->bind("ncclCommInitRankConfig", a.CommInitRankConfig, &absent);
    lib->bind("ncclCommSplit", a.CommSplit, &absent);
    lib->bind("ncclCommGetAsyncError", a.CommGetAsyncError, &absent);
    lib->bind("ncclCommFinalize", a.CommFinalize, &absent);
    lib->bind("ncclCommDestroy", a.CommDestroy, &absent);
    lib->bind("ncclCommAbort", a.CommAbort, &absent);
    lib->bind("ncclAllReduce", a.AllReduce, &absent);
    lib->bind("ncclGetErrorString", a.GetErrorString, &absent);
    lib->bind("ncclGetLastError", a.GetLastError, &absent);
    if (!absent.empty()) {
        return missing("NCCL " + version_text(a.version) + " at " + a.path + " is incomplete",
                       "it lacks " + absent, "install NCCL >= " + version_text(kMinNcclVersion));
    }
    (void)lib->bind("ncclCommInitRankScalable", a.CommInitRankScalable);  // optional: 2.23+
    // Kept for the process's life: communicators outlive any one caller.
    lib->keep();
    return a;
}

Result<CudaApi> bind_cuda(const SharedLibrary& lib, const std::string& prefix) {
    CudaApi a;
    a.path = lib.path();
    if (prefix == "hip") a.not_ready = static_cast<cudaError_t>(600);  // hipErrorNotReady
    const auto sym = [&](const char* n) { return prefix + n; };
    std::string absent;
    lib.bind(sym("GetDeviceCount").c_str(), a.GetDeviceCount, &absent);
    lib.bind(sym("SetDevice").c_str(), a.SetDevice, &absent);
    lib.bind(sym("DeviceGetPCIBusId").c_str(), a.DeviceGetPCIBusId, &absent);
    lib.bind(sym("GetErrorName").c_str(), a.GetErrorName, &absent);
    lib.bind(sym("GetErrorString").c_str(), a.GetErrorString, &absent);
    lib.bind(sym("Malloc").c_str(), a.Malloc, &absent);
    lib.bind(sym("Free").c_str(), a.Free, &absent);
    lib.bind(sym("Memcpy").c_str(), a.Memcpy, &absent);
    lib.bind(sym("StreamCreate").c_str(), a.StreamCreate, &absent);
    lib.bind(sym("StreamDestroy").c_str(), a.StreamDestroy, &absent);
    lib.bind(sym("StreamQuery").c_str(), a.StreamQuery, &absent);
    if (!absent.empty()) {
        return missing("the CUDA runtime at " + a.path + " is incomplete", "it lacks " + absent,
                       "reinstall the CUDA runtime");
    }
    return a;
}

// The wheel folders of one runtime SONAME: nvidia-cuda-runtime-cu12 keeps libcudart.so.12 in
// nvidia/cuda_runtime/lib, the CUDA 13 wheels keep libcudart.so.13 in nvidia/cu13/lib.
std::vector<std::string> runtime_wheel_dirs(const std::string& soname) {
    std::vector<std::string> dirs{"nvidia/cuda_runtime/lib"};
    const auto dot = soname.find(".so.");
    if (soname.rfind("libcudart", 0) == 0 && dot != std::string::npos) {
        const std::string major = soname.substr(dot + 4, soname.find('.', dot + 4) - (dot + 4));
        dirs.push_back("nvidia/cu" + major + "/lib");
    }
    return dirs;
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
    const EnvLookup env = process_env();
    // The runtime the process already holds (a PyTorch cu12 process has libcudart.so.12): a
    // second runtime would keep its own device state, and the driver may not support ours.
    if (auto held = SharedLibrary::find_loaded(sonames); held.is_open()) {
        auto api = bind_cuda(held, prefix);
        held.keep();
        return api;
    }
    // The few calls used here have kept their signatures across majors, so any runtime the
    // driver supports works: a runtime newer than the driver answers its first call with
    // "insufficient driver", and the next major is tried.
    // When every one does (no driver at all answers the same), the first is kept: GPU
    // selection then reports the error with its hint.
    std::string tried;
    std::optional<CudaApi> first;
    for (const std::string& n : sonames) {
        auto lib = SharedLibrary::open(library_candidates(env, n, runtime_wheel_dirs(n)));
        if (!lib) {
            tried += (tried.empty() ? "" : "; ") + lib.error().message;
            continue;
        }
        auto api = bind_cuda(*lib, prefix);
        // Left loaded: a runtime that has started may not be unloaded safely.
        lib->keep();
        if (!api) return api.error();
        int count = 0;
        if (api->GetDeviceCount(&count) != cudaErrorInsufficientDriver) return api;
        if (!first) first = std::move(*api);
    }
    if (first) return *first;
    return missing("the CUDA runtime is not available on this node",
                   "tried " + tried + "; " + sites_text(env),
                   "install the CUDA runtime (libcudart, or the nvidia-cuda-runtime wheel in the "
                   "Python environment) where the loader finds it, or initialise with no_nccl "
                   "for CPU-only work");
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
    static const Result<NcclApi> loaded = load_nccl(process_env());
    if (!loaded) return loaded.error();
    return &*loaded;
}

Result<const CudaApi*> cuda_api() {
    static const Result<CudaApi> loaded =
        is_rccl(nccl_library_name(process_env()))
            ? load_cuda_runtime({"libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5"}, "hip")
            : load_cuda_runtime(cudart_sonames(CUDART_VERSION / 1000));
    if (!loaded) return loaded.error();
    return &*loaded;
}

}  // namespace sddp::nccl
