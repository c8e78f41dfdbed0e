// SPDX-License-Identifier: Apache-2.0
#include "core/task_env.hpp"

#include <utility>

#include "core/cpu_bind_list.hpp"
#include "core/launcher_env.hpp"
#include "core/layout_table.hpp"
#include "core/trainer_env.hpp"

namespace sddp {
namespace {

// Everything this task's GPU binding depends on. Every task of the node builds the same input
// (only local_rank differs), so rank 0 can also show what its node-mates compute.
Result<GpuBindingInput> binding_input(const DdpOptions& opts, const EnvLookup& env,
                                      const LaunchEnv& launch, const TaskHostFacts& host) {
    auto policy = parse_gpu_bind_policy(opts.gpu_bind);
    if (!policy) return policy.take_error();
    GpuBindingInput in;
    in.policy = *policy;
    in.allow_share = opts.gpu_share.value_or(false);
    in.nccl_hints = opts.nccl_hints.value_or(false);
    in.local_rank = static_cast<int>(launch.local_rank);
    in.local_world_size = static_cast<int>(launch.local_world_size);
    const EnvLookup no_step_env = [](std::string_view) { return std::optional<std::string>(); };
    in.slurm = read_slurm_gpu_env(env, host.step_gpu_env ? host.step_gpu_env : no_step_env);
    if (needs_topology(opts)) in.topology = host.topology;
    // closest needs every local task's place; task/affinity exports all their masks. Without it
    // (no CPU binding) the binding falls back to local order and says so in its description.
    if (in.policy == GpuBindPolicy::closest && in.topology) {
        if (auto list = env("SLURM_CPU_BIND_LIST"); list && !list->empty()) {
            auto masks = parse_cpu_bind_list(*list);
            if (!masks) return masks.take_error();
            for (const auto& cpus : *masks)
                in.task_places.push_back(place_of_cpus(*in.topology, cpus));
        }
    }
    return in;
}

// "own (visible list)" for each local rank on this node, for the verbose table: the binding each
// node-mate computes from the same input. Exact unless Slurm narrowed lists per task, which the
// step-level lists undo.
LocalGpuDescriber gpu_describer(const GpuBindingInput& in) {
    return [in = in](std::uint32_t local_rank) mutable -> std::string {  // a mutable copy
        in.local_rank = static_cast<int>(local_rank);
        auto b = bind_gpus(in);
        if (!b) return "?";
        if (b->visible.empty() || b->device_index < 0) return "none";
        std::string list;
        for (const auto& v : b->visible) list += (list.empty() ? "" : ",") + v;
        return b->own + " (" + in.slurm.visible_var + "=" + list + ", device " +
               std::to_string(b->device_index) + ")";
    };
}

bool table_wanted(TableWanted wanted, const DdpOptions& opts, const LaunchEnv& launch) {
    switch (wanted) {
        case TableWanted::never:
            return false;
        case TableWanted::always:
            return true;
        case TableWanted::rank0_if_verbose:
            return opts.verbose.value_or(false) && launch.rank == 0;
    }
    return false;
}

}  // namespace

bool needs_topology(const DdpOptions& opts) {
    return opts.gpu_bind.value_or("") == "closest" || opts.nccl_hints.value_or(false);
}

Result<TaskEnv> derive_task_env(const EnvLookup& env, const DdpOptions& opts,
                                const StepFacts& facts, const TaskHostFacts& host,
                                TableWanted table) {
    TaskEnv out;
    out.facts = facts;
    SDDP_TRY(launch, derive_launch_env(facts, opts, host.launch));
    out.launch = std::move(launch);

    SDDP_TRY(gpu_input, binding_input(opts, env, out.launch, host));

    const std::string& visible_var = gpu_input.slurm.visible_var;
    const auto step_visible = host.step_gpu_env ? host.step_gpu_env(visible_var) : std::nullopt;
    TrainerEnvInput tin;
    tin.facts = &facts;
    tin.launch = &out.launch;
    tin.opts = &opts;
    tin.env = env;
    tin.node_gpus = gpu_list_count(step_visible ? step_visible : env(visible_var));
    tin.gloo_ifname = host.gloo_ifname;
    tin.gloo_why_not = host.gloo_why_not;
    SDDP_TRY(trainer, derive_trainer_env(tin));
    out.vars = std::move(trainer.vars);
    out.launcher = trainer.launcher;
    out.debug_dir = trainer.debug_dir;

    if (trainer.launcher) {
        // The launcher hands the node's GPUs to its workers: no per-task binding, no
        // SLURM_DDP_DEVICE (every worker would inherit the one device), and no OMP_NUM_THREADS
        // (torchrun sets 1 per worker when it is unset).
        auto gpus = launcher_gpu_env(step_visible, env(visible_var), visible_var);
        out.vars.insert(out.vars.end(), gpus.begin(), gpus.end());
        out.binding.describe = "launcher: the step's GPUs on the node are the launcher's";
    } else {
        SDDP_TRY(binding, bind_gpus(gpu_input));
        out.binding = std::move(binding);
        if (out.binding.changed) {
            out.vars.insert(out.vars.end(), out.binding.env.begin(), out.binding.env.end());
        }
        const int bound_cpus = host.task_cpus ? static_cast<int>(host.task_cpus->size()) : 0;
        if (auto omp =
                omp_threads_assignment(env("SLURM_CPUS_PER_TASK"), env("SLURM_CPUS_ON_NODE"),
                                       static_cast<int>(out.launch.local_world_size), bound_cpus)) {
            out.vars.push_back(*omp);
        }
    }

    out.summary = "rank " + std::to_string(out.launch.rank) + "/" +
                  std::to_string(out.launch.world_size) + " MASTER_ADDR=" + out.launch.master_addr +
                  " MASTER_PORT=" + std::to_string(out.launch.master_port) + " " +
                  out.binding.describe;
    if (table_wanted(table, opts, out.launch)) {
        out.table = format_layout_table(facts, out.launch, opts, gpu_describer(gpu_input)) +
                    format_trainer_notes(trainer);
    }
    return out;
}

}  // namespace sddp
