// SPDX-License-Identifier: Apache-2.0
// The whole per-task pipeline: Slurm's variables, the options and a few host facts in, every
// variable `--ddp` sets for one task (plus the verbose table) out.
//
// Why one function: the plugin (task_init), the CLI (`srun slurm-ddp env`) and anything added
// later (a launcher's variables, a framework's) must never disagree about a task. The callers
// only gather facts by I/O (`gather_task_host_facts` in the topology layer) and apply the result;
// everything between is here, pure and unit-tested without Slurm, sockets or CUDA.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/env_lookup.hpp"
#include "core/gpu_binding.hpp"
#include "core/launch_env.hpp"
#include "core/options.hpp"
#include "core/result.hpp"
#include "core/step_facts.hpp"
#include "core/step_hostfile.hpp"

namespace sddp {

// What the pipeline needs beyond the task's environment, gathered by the caller.
struct TaskHostFacts {
    LaunchContext launch;  // the host file (arbitrary only), the user's MASTER_ADDR/MASTER_PORT
    // The step-level GPU lists on this node before Slurm narrows them per task (the plugin keeps
    // them from user_init; a task that is already running cannot see them).
    EnvLookup step_gpu_env;
    std::optional<GpuTopologyFacts> topology;   // read only where `needs_topology` says so
    std::optional<std::vector<int>> task_cpus;  // the task's CPU affinity, when readable
    // net-hints: the interface towards the step's peers (GLOO_SOCKET_IFNAME), or why none.
    std::optional<std::string> gloo_ifname;
    std::optional<std::string> gloo_why_not;
    std::uint32_t uid = 0;  // the job's user: names the --ddp=hostfile file
};

// Reading the topology costs milliseconds per task: only `closest` and the NCCL hints use it.
bool needs_topology(const DdpOptions& opts);

// The GPU binding policy in force: the option, else single under --ddp=tf (each TensorFlow
// worker must see only its own GPU, or every worker takes GPU:0), else local.
GpuBindPolicy effective_gpu_bind(const DdpOptions& opts);

enum class TableWanted { never, rank0_if_verbose, always };

struct TaskEnv {
    StepFacts facts;
    LaunchEnv launch;
    GpuBinding binding;
    std::vector<EnvAssignment> vars;       // in the order to set them
    std::string table;                     // the layout table, when it was wanted
    std::string summary;                   // one line for the debug log
    bool launcher = false;                 // --ddp=launcher: no per-task GPU binding
    std::optional<std::string> debug_dir;  // --ddp=debug: the caller creates it
    std::optional<StepHostfile> hostfile;  // --ddp=hostfile: the caller writes it
};

Result<TaskEnv> derive_task_env(const EnvLookup& env, const DdpOptions& opts,
                                const StepFacts& facts, const TaskHostFacts& host,
                                TableWanted table = TableWanted::rank0_if_verbose);

}  // namespace sddp
