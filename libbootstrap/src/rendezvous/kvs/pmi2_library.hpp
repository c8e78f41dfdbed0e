// SPDX-License-Identifier: Apache-2.0
// Slurm's libpmi2, loaded at run time.
//
// Why dlopen: the library must load and run on machines without libpmi2 (a workstation, a
// container without Slurm's libraries); PMI2 is then simply unavailable and TCP is used. Only
// the functions the transport needs are resolved. The handle is never dlclosed: a PMI2 call may
// still be blocked in another thread after a timeout (see pmi2_worker.hpp).
//
// PMI2_Abort is deliberately not resolved: Slurm's implementation calls exit() in the calling
// process, which a library must never do.
#pragma once

#include <string>

#include "core/base/env_lookup.hpp"
#include "core/base/result.hpp"

namespace sddp {

struct Pmi2Api {
    int (*init)(int* spawned, int* size, int* rank, int* appnum) = nullptr;
    int (*initialized)() = nullptr;
    int (*finalize)() = nullptr;
    int (*job_get_id)(char jobid[], int jobid_size) = nullptr;
    int (*kvs_put)(const char key[], const char value[]) = nullptr;
    int (*kvs_fence)() = nullptr;
    int (*kvs_get)(const char* jobid, int src_pmi_id, const char key[], char value[], int maxvalue,
                   int* vallen) = nullptr;
    std::string path;  // what was loaded, for messages
};

// Loads SLURM_DDP_PMI2_LIBRARY when set (tests, unusual installs), else libpmi2.so.0, else
// libpmi2.so. Cached: later calls return the first result.
Result<Pmi2Api> load_pmi2(const EnvLookup& env);

}  // namespace sddp
