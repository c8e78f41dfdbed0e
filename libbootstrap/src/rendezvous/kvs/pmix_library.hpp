// SPDX-License-Identifier: Apache-2.0
// OpenPMIx's libpmix, loaded at run time.
//
// Why dlopen: as for PMI2 (pmi2_library.hpp), the library must load and run where libpmix is
// absent; PMIx is then unavailable and TCP is used. Only the functions the transport needs are
// resolved. The handle is never dlclosed: a PMIx call may still be blocked in the worker thread
// after a timeout, and libpmix runs its own progress thread.
//
// PMIx_Abort is deliberately not resolved: under Slurm it ends the whole step, which is the
// program's decision, not a library's. PMIx_Finalize is not called either (see pmix_transport.hpp).
#pragma once

#include <string>

#include "core/base/env_lookup.hpp"
#include "core/base/result.hpp"
#include "rendezvous/kvs/pmix_abi.hpp"

namespace sddp {

struct PmixApi {
    using Proc = pmix_abi::Proc;
    using Value = pmix_abi::Value;
    using Info = pmix_abi::Info;
    using status_t = pmix_abi::status_t;

    status_t (*init)(Proc* proc, Info info[], std::size_t ninfo) = nullptr;
    int (*initialized)() = nullptr;
    status_t (*put)(pmix_abi::scope_t scope, const char key[], Value* val) = nullptr;
    status_t (*commit)() = nullptr;
    status_t (*fence)(const Proc procs[], std::size_t nprocs, const Info info[],
                      std::size_t ninfo) = nullptr;
    status_t (*get)(const Proc* proc, const char key[], const Info info[], std::size_t ninfo,
                    Value** val) = nullptr;
    const char* (*error_string)(status_t status) = nullptr;
    // Optional (deprecated in PMIx 5): frees what a value points to; without it the transport
    // frees byte objects itself (libpmix allocates them with malloc).
    void (*value_destruct)(Value* val) = nullptr;
    std::string path;  // what was loaded, for messages
};

// Loads SLURM_DDP_PMIX_LIBRARY when set (tests, unusual installs), else libpmix.so.2, else
// libpmix.so. Cached: later calls return the first result.
Result<PmixApi> load_pmix(const EnvLookup& env);

}  // namespace sddp
