#include "remote_context.hpp"

#include <string>

#include "core/cpu_bind_list.hpp"
#include "core/gpu_binding.hpp"
#include "core/launch_env.hpp"
#include "core/layout_table.hpp"
#include "core/port_choice.hpp"
#include "core/step_facts.hpp"
#include "plugin_log.hpp"
#include "plugin_state.hpp"
#include "spank_env.hpp"
#include "topology/device_access.hpp"
#include "topology/gpu_facts.hpp"
#include "topology/host_files.hpp"

namespace sddp::plugin {
namespace {

constexpr const char* kStepGpuVars[] = {"CUDA_VISIBLE_DEVICES", "SLURM_STEP_GPUS"};

int fail(const StepFacts* facts, const std::string& message) {
    std::string where;
    if (facts != nullptr) {
        where = " (rank " + std::to_string(facts->procid) + " on " + facts->node_name + ", step " +
                std::to_string(facts->job_id) + "." + std::to_string(facts->step_id) + ")";
    }
    log_error(message + where);
    write_task_stderr(std::string(kPluginName) + ": error: " + message + where + "\n");
    return -1;
}

// Everything this task's GPU binding depends on. Every task of the node builds the same input
// (only local_rank differs), so rank 0 can also show what its node-mates compute.
Result<GpuBindingInput> task_binding_input(const DdpOptions& opts, const EnvLookup& env,
                                           const LaunchEnv& launch) {
    auto policy = parse_gpu_bind_policy(opts.gpu_bind);
    if (!policy) return policy.take_error();
    GpuBindingInput in;
    in.policy = *policy;
    in.allow_share = opts.gpu_share.value_or(false);
    in.nccl_hints = opts.nccl_hints.value_or(false);
    in.local_rank = static_cast<int>(launch.local_rank);
    in.local_world_size = static_cast<int>(launch.local_world_size);
    in.slurm = read_slurm_gpu_env(env, map_env(state().step_gpu_env));
    // Topology only where it is used: reading it costs milliseconds per task.
    if (in.policy == GpuBindPolicy::closest || in.nccl_hints) {
        std::string note;
        in.topology = read_node_gpu_facts({}, &note);
        if (!note.empty()) log_verbose("topology: " + note);
    }
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
// step-level lists (user_init) undo.
LocalGpuDescriber gpu_describer(const GpuBindingInput& in) {
    return [in = in](std::uint32_t local_rank) mutable -> std::string {  // a mutable copy
        in.local_rank = static_cast<int>(local_rank);
        auto b = bind_gpus(in);
        if (!b) return "?";
        if (b->visible.empty() || b->device_index < 0) return "none";
        std::string list;
        for (const auto& v : b->visible) list += (list.empty() ? "" : ",") + v;
        return b->own + " (CUDA_VISIBLE_DEVICES=" + list + ", device " +
               std::to_string(b->device_index) + ")";
    };
}

int setup_task(spank_t sp, std::optional<std::uint32_t>* configured_rank) {
    const EnvLookup env = spank_env(sp);
    auto opts = effective_options(state());
    if (!opts) return fail(nullptr, opts.error().message);

    auto facts = read_step_facts(env);
    if (!facts) return fail(nullptr, facts.error().message);

    const LaunchContext ctx = gather_launch_context(env, *facts);
    auto launch = derive_launch_env(*facts, *opts, ctx);
    if (!launch) return fail(&*facts, launch.error().message);
    // Rank 0 runs on MASTER_ADDR's node unless addr= named another: a busy port fails here, now.
    if (launch->rank == 0 && launch->addr_source != "option" && launch->port_source != "user") {
        const auto st = master_port_status(launch->master_port, launch->port_source,
                                           probe_port_bind(launch->master_port));
        if (!st) return fail(&*facts, st.error().message);
    }

    auto gpu_input = task_binding_input(*opts, env, *launch);
    if (!gpu_input) return fail(&*facts, gpu_input.error().message);
    auto binding = bind_gpus(*gpu_input);
    if (!binding) return fail(&*facts, binding.error().message);

    std::vector<EnvAssignment> vars = launch->vars;
    if (binding->changed) vars.insert(vars.end(), binding->env.begin(), binding->env.end());
    auto cpus = read_task_cpus();
    if (auto omp = omp_threads_assignment(env("SLURM_CPUS_PER_TASK"), env("SLURM_CPUS_ON_NODE"),
                                          static_cast<int>(launch->local_world_size),
                                          cpus ? static_cast<int>(cpus->size()) : 0)) {
        vars.push_back(*omp);
    }
    if (auto st = apply_env(sp, vars); !st) return fail(&*facts, st.error().message);

    log_debug("rank " + std::to_string(launch->rank) + "/" + std::to_string(launch->world_size) +
              " MASTER_ADDR=" + launch->master_addr +
              " MASTER_PORT=" + std::to_string(launch->master_port) + " " + binding->describe);
    if (opts->verbose.value_or(false) && launch->rank == 0) {
        write_task_stderr(format_layout_table(*facts, *launch, *opts, gpu_describer(*gpu_input)));
    }
    *configured_rank = launch->rank;
    return 0;
}

}  // namespace

int on_user_init(spank_t sp) {
    if (!ddp_requested(state())) return 0;
    const EnvLookup env = spank_env(sp);
    for (const char* name : kStepGpuVars) {
        if (auto v = env(name)) state().step_gpu_env[name] = *v;
    }
    return 0;
}

int on_task_init(spank_t sp, std::optional<std::uint32_t>* configured_rank) {
    // The batch script, extern and interactive steps are never touched, even with --ddp.
    std::uint32_t step_id = 0;
    if (spank_get_item(sp, S_JOB_STEPID, &step_id) != ESPANK_SUCCESS) return 0;
    if (is_special_step(step_id)) return 0;
    if (!ddp_requested(state())) return 0;
    return setup_task(sp, configured_rank);
}

}  // namespace sddp::plugin
