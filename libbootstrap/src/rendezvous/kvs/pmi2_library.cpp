// SPDX-License-Identifier: Apache-2.0
#include "rendezvous/kvs/pmi2_library.hpp"

#include <vector>

#include "core/contract/contract.hpp"
#include "os/shared_library.hpp"

namespace sddp {
namespace {

Result<Pmi2Api> load_uncached(const EnvLookup& env) {
    std::vector<std::string> candidates;
    if (auto p = env(contract::kPmi2LibraryVar); p && !p->empty()) {
        candidates.push_back(*p);
    } else {
        candidates = {"libpmi2.so.0", "libpmi2.so"};
    }
    SharedLibrary::Options options;
    options.required = {"PMI2_Init",    "PMI2_Initialized", "PMI2_Finalize", "PMI2_Job_GetId",
                        "PMI2_KVS_Put", "PMI2_KVS_Fence",   "PMI2_KVS_Get"};
    auto lib = SharedLibrary::open(candidates, options);
    if (!lib) {
        return make_error(Errc::unsupported,
                          "the PMI2 library cannot be loaded (tried " + lib.error().message +
                              "); install Slurm's libpmi2 (Debian/Ubuntu: libpmi2-0) or use the "
                              "TCP transport (" +
                              std::string(contract::kTransportVar) + "=tcp)");
    }
    Pmi2Api api;
    api.path = lib->path();
    lib->bind("PMI2_Init", api.init);
    lib->bind("PMI2_Initialized", api.initialized);
    lib->bind("PMI2_Finalize", api.finalize);
    lib->bind("PMI2_Job_GetId", api.job_get_id);
    lib->bind("PMI2_KVS_Put", api.kvs_put);
    lib->bind("PMI2_KVS_Fence", api.kvs_fence);
    lib->bind("PMI2_KVS_Get", api.kvs_get);
    lib->keep();
    return api;
}

}  // namespace

Result<Pmi2Api> load_pmi2(const EnvLookup& env) {
    // Once per process, like NCCL's (nccl_library.cpp): the handle is kept, and a static's
    // initialisation is already serialised between threads.
    static const Result<Pmi2Api> loaded = load_uncached(env);
    return loaded;
}

}  // namespace sddp
