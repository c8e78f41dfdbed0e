// SPDX-License-Identifier: Apache-2.0
#include "core/task/debug_env.hpp"

#include "core/base/numbers.hpp"
#include "core/contract/contract.hpp"

namespace sddp {

// The option table declares the variables `debug` sets (for help and the docs too): one list.
const std::vector<std::string>& debug_variable_names() {
    static const std::vector<std::string> kNames = option_variable_names("debug");
    return kNames;
}

Result<DebugEnv> derive_debug_env(const StepOptions& opts, const StepFacts& f,
                                  const std::optional<std::string>& submit_dir,
                                  std::optional<std::uint32_t> rank) {
    const std::string& base = opts.debug_dir;
    std::string dir;
    if (!base.empty() && base.front() == '/') {
        dir = base;
    } else {
        if (!submit_dir || submit_dir->empty() || submit_dir->front() != '/') {
            return make_error(Errc::missing_input,
                              "--ddp=debug" +
                                  (opts.given.debug_dir ? "=" + quote_value(base) : "") +
                                  " names a directory relative to SLURM_SUBMIT_DIR, which is " +
                                  (submit_dir ? "not an absolute path: " + quote_value(*submit_dir)
                                              : std::string("not set")) +
                                  "; give an absolute directory, e.g. --ddp=debug=/scratch/dbg");
        }
        dir = *submit_dir;
        if (dir.back() != '/') dir += '/';
        dir += base;
    }
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    dir += "/" + std::to_string(f.job_id) + "." + std::to_string(f.step_id);

    DebugEnv out;
    out.dir = dir;
    const std::string who =
        rank ? "rank" + std::to_string(*rank) : "node" + std::to_string(f.nodeid) + ".%p";
    auto keep = [&](std::string name, std::string value) {
        out.vars.push_back(EnvAssignment{std::move(name), std::move(value), true});
    };
    keep("NCCL_DEBUG", "INFO");
    keep("NCCL_DEBUG_FILE", dir + "/nccl." + who + ".log");
    keep("TORCH_DISTRIBUTED_DEBUG", "DETAIL");
    keep("TORCH_NCCL_TRACE_BUFFER_SIZE", "2000");
    keep("TORCH_NCCL_DUMP_ON_TIMEOUT", "1");
    keep("TORCH_NCCL_DEBUG_INFO_TEMP_FILE", dir + "/nccl_trace_rank_");
    keep(contract::kDebugDirVar, dir);
    return out;
}

}  // namespace sddp
