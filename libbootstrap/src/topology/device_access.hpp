// SPDX-License-Identifier: Apache-2.0
// Facts about the calling task that only the task itself can observe: which GPU device files
// it may open (a per-task device cgroup hides peers' GPUs) and which CPUs it is bound to.
#pragma once

#include <string>
#include <vector>

#include "core/base/result.hpp"
#include "core/gpu/gpu_binding.hpp"

namespace sddp {

enum class DeviceOpen { accessible, denied, absent, other_error };

// open(2)s the file read-only and closes it. A device cgroup answers EPERM, which stat() and
// access() cannot see. Cost: on a GPU without persistence mode, the first open of /dev/nvidiaN
// may initialise the GPU (up to about a second), so probe only what the binding needs.
DeviceOpen probe_device(const std::string& path);

// DeviceAccess for a narrowed task: `node` when every one of `peer_paths` (the step's other GPU
// device files, e.g. /dev/nvidia<minor>) opens, `task` when one is denied, `unknown` otherwise
// (files absent, e.g. fake GPUs in tests, or no peers).
DeviceAccess probe_peer_access(const std::vector<std::string>& peer_paths);

// access_from_cgroups of this process's /proc/self/cgroup (unknown where it cannot be read).
DeviceAccess read_task_device_access();

// The CPUs (os indices) this thread may run on, from sched_getaffinity: the task's binding
// once Slurm's task plugin has applied it.
Result<std::vector<int>> read_task_cpus();

}  // namespace sddp
