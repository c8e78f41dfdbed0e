// SPDX-License-Identifier: Apache-2.0
// GpuTopologyFacts (plain data, see core/gpu/gpu_binding.hpp) read from hwloc and the NVIDIA
// driver.
#pragma once

#include <optional>
#include <string>

#include "core/base/result.hpp"
#include "core/gpu/gpu_binding.hpp"
#include "topology/hwloc_topology.hpp"

namespace sddp {

// NVIDIA GPUs (PCI vendor 10de, display class 03xx) in bus id order, indexed 0..n-1 in that
// order (the order Slurm's autodetection and CUDA_DEVICE_ORDER=PCI_BUS_ID use); OpenFabrics
// devices (mlx5_0) and network interfaces with their locality; CPU -> NUMA node and package.
Result<GpuTopologyFacts> gpu_facts_from_topology(const HwlocTopology& topology);

struct NodeFactsSource {
    std::optional<std::string> xml_path;  // a saved topology instead of this machine
    std::string driver_gpus_dir = "/proc/driver/nvidia/gpus";
};

// The whole node's facts: hwloc topology (this machine, HWLOC_XMLFILE, or `xml_path`) joined
// with the driver's minor numbers and UUIDs. Without hwloc (or when it fails) the driver's GPUs
// alone are returned, without locality, so "closest" degrades to "local" instead of failing.
GpuTopologyFacts read_node_gpu_facts(const NodeFactsSource& source = {},
                                     std::string* note = nullptr);

}  // namespace sddp
