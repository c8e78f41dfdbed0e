// SPDX-License-Identifier: Apache-2.0
#include "rendezvous/pmix_library.hpp"

#include <dlfcn.h>

#include <mutex>
#include <optional>
#include <vector>

#include "core/contract.hpp"

namespace sddp {
namespace {

template <typename Fn>
bool resolve(void* lib, const char* name, Fn& fn, std::string* missing) {
    // dlsym returns void*; POSIX guarantees the conversion to a function pointer works.
    fn = reinterpret_cast<Fn>(dlsym(lib, name));
    if (!fn && missing) *missing += (missing->empty() ? "" : ", ") + std::string(name);
    return fn != nullptr;
}

Result<PmixApi> load_uncached(const EnvLookup& env) {
    std::vector<std::string> candidates;
    if (auto p = env(contract::kPmixLibraryVar); p && !p->empty()) {
        candidates.push_back(*p);
    } else {
        candidates = {"libpmix.so.2", "libpmix.so"};
    }
    std::string errors;
    for (const auto& path : candidates) {
        // RTLD_GLOBAL: libpmix dlopens its own plugins (pmix_mca_*.so), which expect its symbols
        // to be globally visible. RTLD_LAZY: binding all of libpmix's and its dependencies'
        // functions up front is CPU work every task of a step pays at once (~half of sddp_init
        // at 256 tasks on 2 cores); lazily, only the functions called are bound.
        void* lib = dlopen(path.c_str(), RTLD_LAZY | RTLD_GLOBAL);
        if (!lib) {
            const char* e = dlerror();
            errors += (errors.empty() ? "" : "; ") + std::string(e ? e : path.c_str());
            continue;
        }
        PmixApi api;
        api.path = path;
        std::string missing;
        resolve(lib, "PMIx_Init", api.init, &missing);
        resolve(lib, "PMIx_Initialized", api.initialized, &missing);
        resolve(lib, "PMIx_Put", api.put, &missing);
        resolve(lib, "PMIx_Commit", api.commit, &missing);
        resolve(lib, "PMIx_Fence", api.fence, &missing);
        resolve(lib, "PMIx_Get", api.get, &missing);
        resolve(lib, "PMIx_Error_string", api.error_string, &missing);
        resolve(lib, "PMIx_Value_destruct", api.value_destruct, nullptr);
        if (!missing.empty()) {
            // Not dlclosed: a library loaded RTLD_GLOBAL may already have started threads.
            errors.append(errors.empty() ? "" : "; ")
                .append(path)
                .append(" lacks ")
                .append(missing);
            continue;
        }
        return api;
    }
    return make_error(Errc::unsupported,
                      "the PMIx library cannot be loaded (" + errors +
                          "); install OpenPMIx's libpmix (Debian/Ubuntu: libpmix2; RHEL: pmix), "
                          "point " +
                          contract::kPmixLibraryVar +
                          " at libpmix.so.2, or use the TCP transport (" + contract::kTransportVar +
                          "=tcp)");
}

}  // namespace

Result<PmixApi> load_pmix(const EnvLookup& env) {
    static std::mutex mu;
    static std::optional<Result<PmixApi>> cached;
    std::lock_guard<std::mutex> lock(mu);
    if (!cached) cached.emplace(load_uncached(env));
    return *cached;
}

}  // namespace sddp
