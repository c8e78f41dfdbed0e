// SPDX-License-Identifier: Apache-2.0
// `slurm-ddp check --nccl`: whether this task runs the one-element all-reduce, and the line that
// says which NCCL and CUDA runtime it uses, or why it does not run (no GPU, no library: naming
// the files tried, or a build without the NCCL layer).
#pragma once

#include <string>

#include "core/base/env_lookup.hpp"
#include "core/base/result.hpp"
#include "nccl/nccl_layer.hpp"

namespace sddp::check {

struct NcclPlan {
    bool run = false;
    std::string note;  // one line without its newline, empty when --nccl was not asked for
};

// Pure: `asked` is --nccl, `libs` what nccl::loaded_libraries() answered in this process.
NcclPlan plan_nccl(bool asked, const EnvLookup& env, const Result<nccl::LoadedLibraries>& libs);

}  // namespace sddp::check
