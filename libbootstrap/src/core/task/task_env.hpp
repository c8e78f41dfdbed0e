// SPDX-License-Identifier: Apache-2.0
// The one derive pass for a task: Slurm's variables, the options, the facts gathered before the
// task started and a few host look-ups in; every variable `--ddp` sets for that task, every
// verdict about it and the verbose table out.
//
// Why one function: the plugin (task_init), the CLI (`srun slurm-ddp env`) and anything added
// later must never disagree about a task, so none of them decides anything: the plugin applies
// the result, the CLI prints it. The verdicts made here (a container's MASTER_* replaced, a busy
// MASTER_PORT refused, the GPU binding, the network hints) ask the host only through
// TaskLookups, function objects the caller injects (topology/task_host_facts.hpp gives the real
// ones), so each verdict is unit-tested without Slurm, sockets or CUDA.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/base/env_lookup.hpp"
#include "core/base/result.hpp"
#include "core/gpu/gpu_binding.hpp"
#include "core/options/options.hpp"
#include "core/slurm/step_facts.hpp"
#include "core/slurm/step_hostfile.hpp"
#include "core/task/launch_env.hpp"

namespace sddp {

// Facts fixed before the task started, gathered by the caller.
struct TaskHostFacts {
    LaunchContext launch;  // the host file (arbitrary only), the user's MASTER_ADDR/MASTER_PORT
    // The step-level GPU lists on this node before Slurm narrows them per task (the plugin keeps
    // them from user_init; a task that is already running cannot see them).
    EnvLookup step_gpu_env;
    // Whether srun launched the step with MASTER_ADDR or MASTER_PORT set (the plugin sees it in
    // user_init, before any plugin's task_init); nullopt where it cannot be known (the CLI).
    std::optional<bool> master_at_launch;
    std::uint32_t uid = 0;  // the job's user: names the --ddp=hostfile file
};

// What the derive pass may ask the host, each only when a verdict needs it. An empty look-up
// means "not known here": the verdict that needs it is skipped or says so.
struct TaskLookups {
    // The node's GPU and NIC topology (`closest`, the NCCL hints); `note` gets what a verbose
    // log should say about how it was read.
    std::function<std::optional<GpuTopologyFacts>(std::string* note)> topology;
    // The task's CPU affinity (OMP_NUM_THREADS).
    std::function<std::optional<std::vector<int>>()> task_cpus;
    // The local interface the route towards `peer` leaves by, or nullopt and `why` (net-hints).
    std::function<std::optional<std::string>(const std::string& peer, std::string* why)>
        interface_towards;
    // errno of binding `port` on this node, 0 when it is free (rank 0's MASTER_PORT).
    std::function<int(std::uint16_t port)> port_bind_errno;
    // Whether Slurm confines the task's devices to its own (core/gpu access_from_cgroups).
    std::function<DeviceAccess()> device_access;
};

// Reading the topology costs milliseconds per task: only `closest` and the NCCL hints use it.
bool needs_topology(const StepOptions& opts);

enum class TableWanted { never, rank0_if_verbose, always };

struct TaskEnv {
    StepFacts facts;
    StepOptions options;  // the options in force, after the pass's own verdicts (override)
    LaunchEnv launch;
    GpuBinding binding;
    std::vector<EnvAssignment> vars;       // in the order to set them
    std::string table;                     // the layout table, when it was wanted
    std::string summary;                   // one line for the debug log
    std::vector<std::string> notes;        // lines for the verbose log (why a verdict was made)
    bool launcher = false;                 // --ddp=launcher: no per-task GPU binding
    std::optional<std::string> debug_dir;  // --ddp=debug: the caller creates it
    std::optional<StepHostfile> hostfile;  // --ddp=hostfile: the caller writes it
};

Result<TaskEnv> derive_task_env(const EnvLookup& env, const StepOptions& opts,
                                const StepFacts& facts, const TaskHostFacts& host,
                                const TaskLookups& lookups,
                                TableWanted table = TableWanted::rank0_if_verbose);

}  // namespace sddp
