// SPDX-License-Identifier: Apache-2.0
#include "core/task/task_env.hpp"

#include <cstdint>
#include <utility>

#include "core/contract/contract.hpp"
#include "core/gpu/cpu_bind_list.hpp"
#include "core/gpu/slurm_task_gpus.hpp"
#include "core/task/cluster_spec_env.hpp"
#include "core/task/launcher_env.hpp"
#include "core/task/layout_table.hpp"
#include "core/task/net_hints.hpp"
#include "core/task/port_block.hpp"
#include "core/task/rank_order.hpp"
#include "core/task/task_failure.hpp"
#include "core/task/trainer_env.hpp"

namespace sddp {
namespace {

// Everything this task's GPU binding depends on. Every task of the node builds the same input
// (only local_rank differs), so rank 0 can also show what its node-mates compute.
Result<GpuBindingInput> binding_input(const StepOptions& opts, const EnvLookup& env,
                                      const LaunchEnv& launch, const TaskHostFacts& host,
                                      const TaskLookups& lookups,
                                      const std::optional<GpuTopologyFacts>& topology) {
    GpuBindingInput in;
    in.policy = opts.gpu_bind;
    in.allow_share = opts.gpu_share;
    in.nccl_hints = opts.nccl_hints;
    in.local_rank = static_cast<int>(launch.local_rank);
    in.local_world_size = static_cast<int>(launch.local_world_size);
    const EnvLookup no_step_env = [](std::string_view) { return std::optional<std::string>(); };
    in.slurm = read_slurm_gpu_env(env, host.step_gpu_env ? host.step_gpu_env : no_step_env);
    // Only a task Slurm narrowed can be confined to fewer GPUs than the step has on the node.
    const bool narrowed = in.slurm.step_visible && in.slurm.task_visible &&
                          *in.slurm.step_visible != *in.slurm.task_visible;
    if (narrowed && lookups.device_access) in.access = lookups.device_access();
    in.topology = topology;
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
// node-mate computes from the same input. Where Slurm narrowed the lists per task, a node-mate's
// own lists are rebuilt by Slurm's rule (SLURMD_TRES_BIND); where that rule cannot be known, every
// row says so alike instead of showing this task's narrowing as if it were everyone's.
LocalGpuDescriber gpu_describer(const GpuBindingInput& in, const std::string& tres_bind) {
    const bool narrowed = in.slurm.step_visible && in.slurm.task_visible &&
                          *in.slurm.step_visible != *in.slurm.task_visible;
    const bool rule_known =
        !narrowed || slurm_task_gpus(in.slurm, tres_bind, in.local_rank, in.local_rank);
    return [in, tres_bind, narrowed, rule_known](std::uint32_t local_rank,
                                                 std::uint32_t node_tasks) -> std::string {
        if (!rule_known) return "bound per task by Slurm (" + tres_bind + ")";
        GpuBindingInput row = in;
        row.local_rank = static_cast<int>(local_rank);
        row.local_world_size = static_cast<int>(node_tasks);
        row.task_places.resize(std::min(row.task_places.size(), std::size_t{node_tasks}));
        if (narrowed && row.local_rank != in.local_rank) {
            auto lists = slurm_task_gpus(in.slurm, tres_bind, in.local_rank, row.local_rank);
            if (!lists) return "bound per task by Slurm (" + tres_bind + ")";
            row.slurm = std::move(*lists);
        }
        auto b = bind_gpus(row);
        if (!b) return "?";
        if (b->visible.empty() || b->device_index < 0) return "none";
        std::string list;
        for (const auto& v : b->visible) list += (list.empty() ? "" : ",") + v;
        return b->own + " (" + row.slurm.visible_var + "=" + list + ", device " +
               std::to_string(b->device_index) + ")";
    };
}

bool table_wanted(TableWanted wanted, const StepOptions& opts, const LaunchEnv& launch) {
    switch (wanted) {
        case TableWanted::never:
            return false;
        case TableWanted::always:
            return true;
        case TableWanted::rank0_if_verbose:
            return opts.verbose && launch.rank == 0;
    }
    return false;
}

// --ddp=jax, tf and hostfile: after the binding (JAX_LOCAL_DEVICE_IDS is the bound device).
// Returns the lines they add to the verbose table.
Result<std::string> add_cluster_spec(TaskEnv& out, const StepOptions& opts,
                                     const TaskHostFacts& host, const TrainerEnv& trainer) {
    std::string notes;
    if (opts.jax) {
        const int device = out.binding.changed ? out.binding.device_index : -1;
        auto vars = jax_env(out.launch, device, opts.override_env);
        notes += "slurm-ddp: jax: " + vars.front().name + "=" + vars.front().value +
                 (device >= 0 ? ", JAX_LOCAL_DEVICE_IDS=" + std::to_string(device) : "") + "\n";
        out.vars.insert(out.vars.end(), vars.begin(), vars.end());
    }
    if (opts.tf) {
        SDDP_TRY(tf, tf_config_env(out.facts, out.launch, opts));
        notes += "slurm-ddp: tf: TF_CONFIG worker " + std::to_string(out.launch.rank) + " of " +
                 std::to_string(out.launch.world_size) + ", ports " +
                 std::to_string(out.launch.master_port + 1) +
                 ".. on each node, gpu-bind=" + to_string(opts.gpu_bind) + "\n";
        out.vars.push_back(std::move(tf));
    }
    if (opts.hostfile) {
        std::optional<std::uint32_t> slots;
        if (trainer.launcher) slots = trainer.nproc_per_node;
        const std::size_t first =
            rank0_node(out.facts, opts.rank_order, out.launch.master_addr, opts.addr_suffix);
        SDDP_TRY(file, step_hostfile(out.facts, first, host.uid, slots));
        notes += std::string("slurm-ddp: hostfile: ") + contract::kHostfileVar + "=" + file.path +
                 " (" + std::to_string(out.facts.nodes.size()) + " node(s), rank 0's first)\n";
        out.vars.push_back({contract::kHostfileVar, file.path, false});
        out.hostfile = std::move(file);
    }
    return notes;
}

// pyxis imports a container's environment in its task_init, and enroot's PyTorch hook puts
// MASTER_ADDR/MASTER_PORT there (a port from the job id in the ephemeral range, the same for
// every step). Values srun did not carry are not the user's: they are replaced as with override.
bool container_set_master(const TaskHostFacts& host) {
    const bool now = host.launch.user_master_addr || host.launch.user_master_port;
    return now && host.master_at_launch == false;
}

// Rank 0 runs on MASTER_ADDR's node unless addr= named another: a busy port fails there, at
// once, instead of every rank waiting for a server that cannot start. A port the user exported
// is the user's to manage (their own server may already hold it).
Status check_master_port(const LaunchEnv& launch, const TaskLookups& lookups) {
    if (launch.rank != 0 || launch.addr_source == AddrSource::option ||
        launch.port_source == PortSource::user || !lookups.port_bind_errno) {
        return ok_status();
    }
    return master_port_status(launch.master_port, launch.port_source,
                              lookups.port_bind_errno(launch.master_port));
}

// net-hints: the interface towards the step's peers, asked only where a hint is wanted and
// there is a peer (one node needs none).
void gloo_interface(TrainerEnvInput& tin, const StepFacts& facts, const LaunchEnv& launch,
                    const StepOptions& opts, const TaskLookups& lookups) {
    if (!opts.nccl_hints || !lookups.interface_towards) return;
    const auto peer = net_hint_peer(facts, launch);
    if (!peer) return;
    std::string why;
    tin.gloo_ifname = lookups.interface_towards(*peer, &why);
    if (!tin.gloo_ifname) tin.gloo_why_not = why;
}

Result<TrainerEnv> trainer_env(const TaskEnv& out, const EnvLookup& env, const TaskLookups& lookups,
                               std::optional<std::uint32_t> node_gpus) {
    TrainerEnvInput tin;
    tin.facts = &out.facts;
    tin.launch = &out.launch;
    tin.opts = &out.options;
    tin.env = env;
    tin.node_gpus = node_gpus;
    gloo_interface(tin, out.facts, out.launch, out.options, lookups);
    return derive_trainer_env(tin);
}

// --cpus-per-task, else the step's CPUs on the node shared by its tasks, capped by the CPUs
// bound to the task.
std::optional<EnvAssignment> omp_threads(const EnvLookup& env, const LaunchEnv& launch,
                                         const TaskLookups& lookups) {
    std::optional<std::vector<int>> cpus;
    if (lookups.task_cpus) cpus = lookups.task_cpus();
    const int bound_cpus = cpus ? static_cast<int>(cpus->size()) : 0;
    return omp_threads_assignment(env("SLURM_CPUS_PER_TASK"), env("SLURM_CPUS_ON_NODE"),
                                  static_cast<int>(launch.local_world_size), bound_cpus);
}

}  // namespace

bool needs_topology(const StepOptions& opts) {
    return opts.gpu_bind == GpuBindPolicy::closest || opts.nccl_hints;
}

Result<TaskEnv> derive_task_env(const EnvLookup& env, const StepOptions& opts,
                                const StepFacts& facts, const TaskHostFacts& host,
                                const TaskLookups& lookups, TableWanted table) {
    TaskEnv out;
    out.facts = facts;
    out.options = opts;
    if (container_set_master(host)) {
        out.options.override_env = true;
        out.notes.emplace_back(
            "MASTER_ADDR/MASTER_PORT appeared after launch (set by another plugin, e.g. a "
            "container hook): replaced with the step's");
    }
    SDDP_TRY(launch, derive_launch_env(facts, out.options, host.launch));
    out.launch = std::move(launch);
    SDDP_CHECK(check_master_port(out.launch, lookups));

    std::optional<GpuTopologyFacts> topology;
    if (needs_topology(out.options) && lookups.topology) {
        std::string note;
        topology = lookups.topology(&note);
        if (!note.empty()) out.notes.push_back("topology: " + note);
    }
    SDDP_TRY(gpu_input, binding_input(out.options, env, out.launch, host, lookups, topology));
    const std::string& visible_var = gpu_input.slurm.visible_var;
    const auto step_visible = host.step_gpu_env ? host.step_gpu_env(visible_var) : std::nullopt;

    SDDP_TRY(trainer, trainer_env(out, env, lookups,
                                  gpu_list_count(step_visible ? step_visible : env(visible_var))));
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
        if (auto omp = omp_threads(env, out.launch, lookups)) out.vars.push_back(*omp);
    }

    SDDP_TRY(spec_notes, add_cluster_spec(out, out.options, host, trainer));
    out.vars.push_back(restarts_assignment(env));

    out.summary = "rank " + std::to_string(out.launch.rank) + "/" +
                  std::to_string(out.launch.world_size) + " MASTER_ADDR=" + out.launch.master_addr +
                  " MASTER_PORT=" + std::to_string(out.launch.master_port) + " " +
                  out.binding.describe;
    if (table_wanted(table, out.options, out.launch)) {
        out.table =
            format_layout_table(facts, out.launch, out.options,
                                gpu_describer(gpu_input, env("SLURMD_TRES_BIND").value_or(""))) +
            format_trainer_notes(trainer) + spec_notes;
    }
    return out;
}

}  // namespace sddp
