// SPDX-License-Identifier: Apache-2.0
#include "rendezvous/pmi2_library.hpp"

#include <dlfcn.h>

#include <mutex>
#include <optional>
#include <vector>

#include "core/contract.hpp"

namespace sddp {
namespace {

template <typename Fn>
bool resolve(void* lib, const char* name, Fn& fn, std::string& missing) {
    // dlsym returns void*; POSIX guarantees the conversion to a function pointer works.
    fn = reinterpret_cast<Fn>(dlsym(lib, name));
    if (!fn) missing += (missing.empty() ? "" : ", ") + std::string(name);
    return fn != nullptr;
}

Result<Pmi2Api> load_uncached(const EnvLookup& env) {
    std::vector<std::string> candidates;
    if (auto p = env(contract::kPmi2LibraryVar); p && !p->empty()) {
        candidates.push_back(*p);
    } else {
        candidates = {"libpmi2.so.0", "libpmi2.so"};
    }
    std::string errors;
    for (const auto& path : candidates) {
        void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
            const char* e = dlerror();
            errors += (errors.empty() ? "" : "; ") + std::string(e ? e : path.c_str());
            continue;
        }
        Pmi2Api api;
        api.path = path;
        std::string missing;
        resolve(lib, "PMI2_Init", api.init, missing);
        resolve(lib, "PMI2_Initialized", api.initialized, missing);
        resolve(lib, "PMI2_Finalize", api.finalize, missing);
        resolve(lib, "PMI2_Job_GetId", api.job_get_id, missing);
        resolve(lib, "PMI2_KVS_Put", api.kvs_put, missing);
        resolve(lib, "PMI2_KVS_Fence", api.kvs_fence, missing);
        resolve(lib, "PMI2_KVS_Get", api.kvs_get, missing);
        if (!missing.empty()) {
            dlclose(lib);
            errors += (errors.empty() ? "" : "; ") + path + " lacks " + missing;
            continue;
        }
        return api;
    }
    return make_error(Errc::unsupported,
                      "the PMI2 library cannot be loaded (" + errors +
                          "); install Slurm's libpmi2 (Debian/Ubuntu: libpmi2-0) or use the TCP "
                          "transport (" +
                          std::string(contract::kTransportVar) + "=tcp)");
}

}  // namespace

Result<Pmi2Api> load_pmi2(const EnvLookup& env) {
    static std::mutex mu;
    static std::optional<Result<Pmi2Api>> cached;
    std::lock_guard<std::mutex> lock(mu);
    if (!cached) cached.emplace(load_uncached(env));
    return *cached;
}

}  // namespace sddp
