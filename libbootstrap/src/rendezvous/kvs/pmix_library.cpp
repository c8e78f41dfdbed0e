// SPDX-License-Identifier: Apache-2.0
#include "rendezvous/kvs/pmix_library.hpp"

#include <vector>

#include "core/contract/contract.hpp"
#include "os/shared_library.hpp"

namespace sddp {
namespace {

Result<PmixApi> load_uncached(const EnvLookup& env) {
    std::vector<std::string> candidates;
    if (auto p = env(contract::kPmixLibraryVar); p && !p->empty()) {
        candidates.push_back(*p);
    } else {
        candidates = {"libpmix.so.2", "libpmix.so"};
    }
    SharedLibrary::Options options;
    // RTLD_GLOBAL: libpmix dlopens its own plugins (pmix_mca_*.so), which expect its symbols to
    // be globally visible. RTLD_LAZY: binding all of libpmix's and its dependencies' functions
    // up front is CPU work every task of a step pays at once (~half of sddp_init at 256 tasks
    // on 2 cores); lazily, only the functions called are bound.
    options.flags = RTLD_LAZY | RTLD_GLOBAL;
    options.required = {"PMIx_Init",  "PMIx_Initialized", "PMIx_Put",         "PMIx_Commit",
                        "PMIx_Fence", "PMIx_Get",         "PMIx_Error_string"};
    auto lib = SharedLibrary::open(candidates, options);
    if (!lib) {
        return make_error(Errc::unsupported,
                          "the PMIx library cannot be loaded (tried " + lib.error().message +
                              "); install OpenPMIx's libpmix (Debian/Ubuntu: libpmix2; RHEL: "
                              "pmix), point " +
                              contract::kPmixLibraryVar +
                              " at libpmix.so.2, or use the TCP transport (" +
                              contract::kTransportVar + "=tcp)");
    }
    PmixApi api;
    api.path = lib->path();
    lib->bind("PMIx_Init", api.init);
    lib->bind("PMIx_Initialized", api.initialized);
    lib->bind("PMIx_Put", api.put);
    lib->bind("PMIx_Commit", api.commit);
    lib->bind("PMIx_Fence", api.fence);
    lib->bind("PMIx_Get", api.get);
    lib->bind("PMIx_Error_string", api.error_string);
    lib->bind("PMIx_Value_destruct", api.value_destruct);  // optional
    lib->keep();
    return api;
}

}  // namespace

Result<PmixApi> load_pmix(const EnvLookup& env) {
    // Once per process, like NCCL's (nccl_library.cpp): the handle is kept, and a static's
    // initialisation is already serialised between threads.
    static const Result<PmixApi> loaded = load_uncached(env);
    return loaded;
}

}  // namespace sddp
