// SPDX-License-Identifier: Apache-2.0
// GPU binding: which GPUs a DDP task sees and which one is its own. Pure: strings and facts in,
// a binding (or an error that names the counts and the fix) out. No hwloc, no CUDA, no getenv.
//
// Why: Slurm narrows CUDA_VISIBLE_DEVICES in some modes and not in others, and trainers index
// with cuda:LOCAL_RANK. Under --gpus-per-task=1 task 1 sees one GPU and asks for ordinal 1
// ("invalid device ordinal"); under --gres=gpu:N with more tasks than GPUs two ranks land on one
// GPU and NCCL refuses. The binding makes "device LOCAL_RANK is my GPU" true wherever possible,
// and says so explicitly (SLURM_DDP_DEVICE) where it cannot be.
//
// What Slurm 22.05.8 exports, measured on the local test cluster (TaskPlugin=task/none,
// ConstrainDevices=no, gres.conf File=.../nvidia[0-3], 4 GPUs per node) and read in the source
// (src/plugins/gres/common/gres_common.c, src/common/gres.c, slurmstepd/task.c). Per task:
//
// CVD = CUDA_VISIBLE_DEVICES, SG = SLURM_STEP_GPUS, ON = SLURM_GPUS_ON_NODE, TB = SLURMD_TRES_BIND;
// Lk = local rank k. GPU_DEVICE_ORDINAL always equals CVD.
//
//   srun options                        | CVD per task         | SG        | ON | TB
//   ------------------------------------+----------------------+-----------+----+-----------------
//   -n4 --gres=gpu:4                    | 0,1,2,3 (every task) | = CVD     | 4  | unset
//   -n2 --gres=gpu:2                    | 0,1                  | = CVD     | 2  | unset
//   -n4 --gpus-per-task=1               | L0:0 L1:1 L2:2 L3:3  | = CVD     | 4  | gpu:per_task:1
//   -n2 --gpus-per-task=2               | L0:0,1 L1:2,3        | = CVD     | 4  | gpu:per_task:2
//   -n4 --gres=gpu:4 --gpu-bind=single:1| L0:0 L1:1 L2:2 L3:3  | = CVD     | 4  | gpu:single:1
//   -n3 --gres=gpu:2 --gpu-bind=single:2| L0:0 L1:0 L2:1       | = CVD     | 2  | gpu:single:2
//   -n4 --gres=gpu:4                    | L0:3 L1:2 L2:1 L3:0  | = CVD     | 4  | gpu:map_gpu:
//       --gpu-bind=map_gpu:3,2,1,0      |                      |           |    |   3,2,1,0
//   -N2 -n4 --gpus-per-node=2           | 0,1 (3 tasks on n1, 1 on n2)     | = CVD | 2 | unset
//   2nd job on a node, --gres=gpu:2     | 2,3 (global indices) | 2,3       | 2  | unset
//   2nd job, --gres=gpu:2               | L0:2 L1:3            | = CVD     | 2  | gpu:per_task:1
//       --gpus-per-task=1               |                      |           |    |
//   srun in sbatch --gres=gpu:2         | as without sbatch; SLURM_JOB_GPUS=0,1 is inherited from
//                                       | the batch script (the batch node's view only)
//   srun --gres=none in that job        | unset                | unset     | unset | unset
//
// With TaskPlugin=task/cgroup and ConstrainDevices=yes (measured under 22.05.8 and 26.05.3 on the
// test cluster's production profile, cgroup v1): CUDA_VISIBLE_DEVICES holds *local* indices,
// 0..n-1 over the step's GPUs on the node when not narrowed (SLURM_STEP_GPUS keeps the global
// ones: a second job on GPUs 2,3 sees CUDA_VISIBLE_DEVICES=0,1, SLURM_STEP_GPUS=2,3), and 0..k-1
// over the task's own GPUs when narrowed, where SLURM_STEP_GPUS is renumbered too (every task of
// -n2 --gpus-per-task=1 or --gpu-bind=map_gpu:3,2,1,0 sees 0 and 0); the device cgroup then
// lets each task open only its own GPUs, so the lists alone cannot tell which GPU a narrowed task
// has: access_from_cgroups says that it is confined. Where gres.conf gives devices unique ids (MIG), CUDA_VISIBLE_DEVICES holds those ids.
// SLURM_STEP_GPUS is narrowed per task exactly like CUDA_VISIBLE_DEVICES, so a narrowed task
// cannot see its peers' GPUs from its own environment: the step-level values (before per-task
// narrowing) are in the step environment, which a SPANK plugin reads in slurm_spank_user_init
// (slurmstepd, before the tasks fork) and which tasks inherit in memory.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/env_lookup.hpp"
#include "core/base/result.hpp"
#include "core/options/options.hpp"

namespace sddp {

// GpuBindPolicy is an option value (core/options/options.hpp), typed when --ddp is parsed.

// Which of the step's GPUs on this node the task can open. `task` is the per-task device cgroup
// (ConstrainDevices=yes with narrowing): reordering the list cannot give access to peers' GPUs.
enum class DeviceAccess { unknown, node, task };

// From /proc/self/cgroup: `task` where Slurm's task/cgroup put the task in a cgroup of its own
// (".../step_S/task_N" for the devices controller on cgroup v1, or the one cgroup v2 path): there
// Slurm confines a task it binds to GPUs (--gpus-per-task, --gpu-bind) to those GPUs and numbers
// them from 0 (measured with ConstrainDevices=yes under 22.05 and 26.05: every such task gets
// CUDA_VISIBLE_DEVICES=0 and SLURM_STEP_GPUS=0). `unknown` otherwise (no per-task cgroup:
// proctrack/linuxproc, task/none, or a v1 tree without the devices controller).
DeviceAccess access_from_cgroups(std::string_view proc_self_cgroup);

// ---- Topology facts (filled by sddp_topology from hwloc and the NVIDIA driver; plain data). --

struct GpuFact {
    int index = -1;          // Slurm/CUDA index: position in PCI bus id order on the node
    std::string pci_bus_id;  // "0000:3b:00.0", lower case
    std::string uuid;        // "GPU-..." from the driver, empty if unknown
    int minor = -1;          // /dev/nvidiaN, -1 if unknown
    int numa = -1;           // NUMA node os index, -1 if unknown or spanning several
    int package = -1;        // package (socket) os index, -1 if unknown
    std::string pci_switch;  // bus id of the nearest PCI bridge above it, empty if directly
                             // under a host bridge
};

enum class NicKind { hca, netdev };  // hca: OpenFabrics device (mlx5_0); netdev: an interface

struct NicFact {
    std::string name;  // "mlx5_0", "ib0", "eno1"
    NicKind kind = NicKind::netdev;
    std::string pci_bus_id;
    int numa = -1;
    int package = -1;
    std::string pci_switch;
};

struct GpuTopologyFacts {
    std::vector<GpuFact> gpus;        // sorted by index
    std::vector<NicFact> nics;        // sorted by name
    std::vector<int> numa_of_cpu;     // by CPU os index; -1 where unknown
    std::vector<int> package_of_cpu;  // by CPU os index; -1 where unknown
};

// Where a task's CPUs are: the NUMA node / package when all of them share one, else -1.
struct TaskPlace {
    int numa = -1;
    int package = -1;
    bool operator==(const TaskPlace&) const = default;
};
TaskPlace place_of_cpus(const GpuTopologyFacts& facts, const std::vector<int>& cpus);

// ---- Binding. ----------------------------------------------------------------------------

// The variable Slurm lists a task's GPUs in, by the gres.conf flags of the node: NVIDIA
// (nvidia_gpu_env, the default) CUDA_VISIBLE_DEVICES, AMD (amd_gpu_env) ROCR_VISIBLE_DEVICES,
// Intel (intel_gpu_env) ZE_AFFINITY_MASK. The binding rewrites the one Slurm set and never
// invents another: a ROCm or Level Zero program does not read CUDA_VISIBLE_DEVICES.
inline constexpr const char* kVisibleDeviceVars[] = {"CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES",
                                                     "ZE_AFFINITY_MASK"};

// Slurm's values, exactly as exported (nullopt when unset). "task" values are what task_init
// sees (narrowed per task where Slurm binds); "step" values are what slurm_spank_user_init sees
// (the step's GPUs on this node, before per-task narrowing).
struct SlurmGpuEnv {
    // Which of kVisibleDeviceVars task_visible and step_visible were read from.
    std::string visible_var = "CUDA_VISIBLE_DEVICES";
    std::optional<std::string> task_visible;  // CUDA_VISIBLE_DEVICES (or visible_var) in task_init
    std::optional<std::string> task_ordinal;  // GPU_DEVICE_ORDINAL in task_init
    std::optional<std::string> task_gpus;     // SLURM_STEP_GPUS in task_init (global indices)
    std::optional<std::string> gpus_on_node;  // SLURM_GPUS_ON_NODE (step's count, never narrowed)
    std::optional<std::string> step_visible;  // CUDA_VISIBLE_DEVICES in user_init
    std::optional<std::string> step_gpus;     // SLURM_STEP_GPUS in user_init (global indices)
};

// Reads the task-level fields from `task_env` and the step-level ones from `step_env` (either
// may be empty lookups). The visible list is the first of kVisibleDeviceVars set in the task's
// environment (else in the step's).
SlurmGpuEnv read_slurm_gpu_env(const EnvLookup& task_env, const EnvLookup& step_env);

struct GpuBindingInput {
    GpuBindPolicy policy = GpuBindPolicy::local;
    bool allow_share = false;  // gpu-share: more tasks than GPUs, round-robin
    bool nccl_hints = false;   // net-hints: UCX_NET_DEVICES for the nearest HCA
    int local_rank = 0;        // SLURM_LOCALID
    int local_world_size = 1;  // tasks of this step on this node
    SlurmGpuEnv slurm;
    DeviceAccess access = DeviceAccess::unknown;  // unknown: inferred from the lists
    std::optional<GpuTopologyFacts> topology;     // for closest and NCCL hints
    std::vector<TaskPlace> task_places;           // by local rank, for closest (all tasks)
};

struct GpuBinding {
    bool changed = false;              // false: nothing to set (none, CPU step)
    std::vector<std::string> visible;  // the task's CUDA_VISIBLE_DEVICES entries after binding
    int device_index = -1;             // own GPU's index within `visible`; -1 without GPUs
    std::string own;                   // own GPU's entry (as in `visible`)
    std::vector<EnvAssignment> env;    // to set; keep_existing entries only where unset
    std::string describe;              // one line for logs and the verbose table
};

// The binding for one task. Every task on a node computes the same node-wide assignment from
// the same inputs, so tasks agree without talking to each other.
//
// Rules, in order:
//  - policy none, or no GPUs from Slurm (CUDA_VISIBLE_DEVICES unset/empty, or set while none of
//    SLURM_STEP_GPUS / SLURM_GPUS_ON_NODE is: a user's value, not Slurm's): changed = false.
//  - more tasks on the node than step GPUs: error naming both counts and the fixes, unless
//    allow_share (then own GPU = round-robin over the node list, index LOCAL_RANK % n).
//  - Slurm narrowed the task (--gpus-per-task, --gpu-bind=single/map_gpu/mask_gpu): own GPU is
//    the first of Slurm's. With node-wide access and the step's list known, local/closest show
//    the whole node list with own at index LOCAL_RANK; otherwise Slurm's list is kept and the
//    own index (0) is exported as SLURM_DDP_DEVICE.
//  - Not narrowed: own GPU is list[LOCAL_RANK] (local, single) or the nearest free GPU by
//    rank order (closest: same PCI switch/NUMA < same package < elsewhere, then lowest index).
//  - single: visible = [own], index 0. local/closest: own at index LOCAL_RANK (LOCAL_RANK % n
//    when sharing), the others after it in Slurm's order.
//  - MIG instances (CUDA uses only the first MIG instance a process is shown): visible = [own],
//    index 0, under every policy, so that each local rank gets an instance of its own.
// Sets the visible list (CUDA_VISIBLE_DEVICES, or Slurm's ROCR_VISIBLE_DEVICES /
// ZE_AFFINITY_MASK), GPU_DEVICE_ORDINAL (when Slurm set it), SLURM_DDP_DEVICE, and
// (keep_existing, NVIDIA only) CUDA_DEVICE_ORDER=PCI_BUS_ID and, with net-hints, UCX_NET_DEVICES
// (per process; NCCL's NCCL_IB_HCA is left alone, and NCCL_SOCKET_IFNAME is per node, in
// core/task/trainer_env.cpp).
Result<GpuBinding> bind_gpus(const GpuBindingInput& in);

// The node-wide closest assignment: for each local rank, the position in a list of `gpus`
// (facts in list order; missing facts are "far") of its GPU. Wraps round when sharing.
std::vector<int> assign_closest(const std::vector<GpuFact>& gpus,
                                const std::vector<TaskPlace>& places, int local_world_size);

// OMP_NUM_THREADS (keep_existing): SLURM_CPUS_PER_TASK when set and valid; else this task's share
// of the step's CPUs on its node, SLURM_CPUS_ON_NODE / local_world_size (at least 1), capped by
// the CPUs bound to the task when known (> 0). Without CPU binding each task sees every CPU of
// the step: giving each all of them would run local_world_size times too many threads.
// nullopt when nothing is known.
std::optional<EnvAssignment> omp_threads_assignment(std::optional<std::string_view> cpus_per_task,
                                                    std::optional<std::string_view> cpus_on_node,
                                                    int local_world_size, int bound_cpu_count);

}  // namespace sddp
