// SPDX-License-Identifier: Apache-2.0
#include "core/task/launcher_env.hpp"

#include <algorithm>
#include <cstdint>

#include "core/base/numbers.hpp"
#include "core/contract/contract.hpp"

namespace sddp {

const std::vector<std::string>& launcher_omitted_names() {
    static const std::vector<std::string> kNames{
        "RANK",      "LOCAL_RANK",      "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK",
        "ROLE_RANK", "ROLE_WORLD_SIZE", "ROLE_NAME",  "GROUP_WORLD_SIZE"};
    return kNames;
}

const std::vector<std::string>& launcher_variable_names() {
    static const std::vector<std::string> kNames{
        "PET_NNODES",      "PET_NODE_RANK",    "PET_NPROC_PER_NODE",      "PET_MASTER_ADDR",
        "PET_MASTER_PORT", "PET_RDZV_BACKEND", contract::kNumProcessesVar};
    return kNames;
}

Result<LauncherEnv> derive_launcher_env(const StepFacts& f, const LaunchEnv& launch,
                                        const StepOptions& opts,
                                        std::optional<std::uint32_t> node_gpus) {
    for (std::size_t n = 0; n < f.tasks_per_node.size(); ++n) {
        if (f.tasks_per_node[n] <= 1) continue;
        const std::string node = n < f.nodes.size() ? f.nodes[n] : "#" + std::to_string(n);
        return make_error(Errc::invalid_input,
                          "--ddp=launcher needs one task per node (the launcher starts the "
                          "workers), but node " +
                              quote_value(node) + " runs " + std::to_string(f.tasks_per_node[n]) +
                              " tasks of the step; run srun with --ntasks-per-node=1 (and -N "
                              "for the node count), or drop launcher to let --ddp number every "
                              "task");
    }
    LauncherEnv out;
    if (opts.nproc) {
        out.nproc_per_node = *opts.nproc;
        out.nproc_source = "option";
    } else if (node_gpus && *node_gpus > 0) {
        out.nproc_per_node = *node_gpus;
        out.nproc_source = "gpus";
    } else {
        out.nproc_source = "default";
    }
    const auto& omitted = launcher_omitted_names();
    for (const auto& v : launch.vars) {
        if (std::find(omitted.begin(), omitted.end(), v.name) == omitted.end())
            out.vars.push_back(v);
    }
    auto set = [&](std::string name, std::string value, bool keep = false) {
        out.vars.push_back(EnvAssignment{std::move(name), std::move(value), keep});
    };
    set("PET_NNODES", std::to_string(launch.nnodes));
    set("PET_NODE_RANK", std::to_string(launch.node_rank));
    set("PET_NPROC_PER_NODE", std::to_string(out.nproc_per_node));
    set("PET_MASTER_ADDR", launch.master_addr);
    set("PET_MASTER_PORT", std::to_string(launch.master_port));
    // torchrun's default is already static; a user who exports another backend means it.
    set("PET_RDZV_BACKEND", "static", true);
    set(contract::kNumProcessesVar,
        std::to_string(std::uint64_t{launch.nnodes} * out.nproc_per_node));
    return out;
}

std::optional<std::uint32_t> gpu_list_count(const std::optional<std::string>& list) {
    if (!list || list->empty()) return std::nullopt;
    return static_cast<std::uint32_t>(1 + std::count(list->begin(), list->end(), ','));
}

std::vector<EnvAssignment> launcher_gpu_env(const std::optional<std::string>& step_visible,
                                            const std::optional<std::string>& task_visible,
                                            const std::string& var) {
    if (!step_visible || step_visible->empty() || step_visible == task_visible) return {};
    return {EnvAssignment{var, *step_visible, false}};
}

}  // namespace sddp
