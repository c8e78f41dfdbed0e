// SPDX-License-Identifier: Apache-2.0
#include "core/task/trainer_env.hpp"

#include "core/contract/contract.hpp"
#include "core/task/cluster_spec_env.hpp"
#include "core/task/debug_env.hpp"
#include "core/task/framework_env.hpp"
#include "core/task/launcher_env.hpp"
#include "core/task/net_hints.hpp"

namespace sddp {

std::vector<std::string> trainer_variable_names() {
    std::vector<std::string> out;
    for (const auto* list :
         {&launcher_variable_names(), &framework_variable_names(), &debug_variable_names(),
          &cluster_spec_variable_names(), &net_hints_variable_names()})
        out.insert(out.end(), list->begin(), list->end());
    out.emplace_back(contract::kHostfileVar);
    return out;
}

Result<TrainerEnv> derive_trainer_env(const TrainerEnvInput& in) {
    if (in.facts == nullptr || in.launch == nullptr || in.opts == nullptr || !in.env) {
        return make_error(Errc::internal, "derive_trainer_env: missing input");
    }
    const StepFacts& f = *in.facts;
    const LaunchEnv& launch = *in.launch;
    const StepOptions& opts = *in.opts;
    TrainerEnv out;
    auto append = [&](const std::vector<EnvAssignment>& vars) {
        out.vars.insert(out.vars.end(), vars.begin(), vars.end());
    };

    out.launcher = opts.launcher;
    if (out.launcher) {
        SDDP_TRY(l, derive_launcher_env(f, launch, opts, in.node_gpus));
        out.vars = std::move(l.vars);
        out.nproc_per_node = l.nproc_per_node;
        out.notes.push_back("launcher: PET_NNODES=" + std::to_string(launch.nnodes) +
                            " PET_NPROC_PER_NODE=" + std::to_string(l.nproc_per_node) + " (" +
                            l.nproc_source + "), no RANK/LOCAL_RANK/WORLD_SIZE for the launcher");
    } else {
        out.vars = launch.vars;
        if (opts.rank_order == RankOrder::node)
            out.notes.push_back("rank-order=node: RANK is contiguous per node");
    }
    append(worker_default_env(in.env));
    if (opts.torchelastic) {
        SDDP_TRY(t, torchelastic_env(f, in.env("SLURM_RESTART_COUNT")));
        append(t);
    }
    if (opts.debug) {
        std::optional<std::uint32_t> rank;
        if (!out.launcher) rank = launch.rank;
        SDDP_TRY(d, derive_debug_env(opts, f, in.env("SLURM_SUBMIT_DIR"), rank));
        append(d.vars);
        out.debug_dir = d.dir;
        out.notes.push_back("debug: NCCL/torch diagnostics in " + d.dir);
    }
    if (opts.nccl_hints) {
        append(socket_hint_env(in.gloo_ifname));
        if (in.gloo_ifname) {
            out.notes.push_back("net-hints: GLOO_SOCKET_IFNAME=" + *in.gloo_ifname +
                                " and NCCL_SOCKET_IFNAME==" + *in.gloo_ifname +
                                " on this node (unless you set them)");
        } else if (in.gloo_why_not) {
            out.notes.push_back("net-hints: no GLOO_SOCKET_IFNAME: " + *in.gloo_why_not);
        }
    }
    return out;
}

std::string format_trainer_notes(const TrainerEnv& t) {
    std::string out;
    for (const auto& n : t.notes) out += "slurm-ddp: " + n + "\n";
    return out;
}

}  // namespace sddp
