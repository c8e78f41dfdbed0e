// SPDX-License-Identifier: Apache-2.0
// GPU facts from the NVIDIA kernel driver, without CUDA or NVML.
//
// /proc/driver/nvidia/gpus/<bus id>/information holds, per GPU, "Device Minor: N" (the N of
// /dev/nvidiaN, which is what gres.conf File= names), "GPU UUID: GPU-..." (what a UUID-style
// CUDA_VISIBLE_DEVICES holds) and "Bus Location: 0000:3b:00.0" (what hwloc reports). Joining
// them maps Slurm's device files and ids onto topology. Nodes without the driver (CPU nodes,
// containers without /proc/driver) give an empty list, not an error.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/result.hpp"
#include "core/gpu/gpu_binding.hpp"

namespace sddp {

inline constexpr const char* kNvidiaDriverGpusDir = "/proc/driver/nvidia/gpus";

struct NvidiaDriverGpu {
    std::string pci_bus_id;  // normalized: "0000:3b:00.0"
    int minor = -1;
    std::string uuid;
    std::string model;
};

// "3b:00.0", "0000:3B:00.0", "00000000:3b:00.0" (NVML) -> "0000:3b:00.0"; nullopt if malformed.
std::optional<std::string> normalize_pci_bus_id(std::string_view text);

// One information file's text. `dir_name` (the bus id directory) is used when the file has no
// "Bus Location" line. Error (invalid_input) when there is no valid bus id or minor number.
Result<NvidiaDriverGpu> parse_nvidia_gpu_information(std::string_view text,
                                                     std::string_view dir_name);

// Every GPU under `gpus_dir`, sorted by bus id. Missing directory: empty list. Entries whose
// file is unreadable or malformed are skipped (`skipped` counts them, for a debug line).
std::vector<NvidiaDriverGpu> read_nvidia_driver_gpus(
    const std::string& gpus_dir = kNvidiaDriverGpusDir, int* skipped = nullptr);

// Adds minor numbers and UUIDs to `facts` by bus id. GPUs the driver knows but the topology does
// not (hwloc without PCI support) are appended with what the driver knows, indexed after the
// others in bus id order.
void merge_driver_facts(GpuTopologyFacts& facts, const std::vector<NvidiaDriverGpu>& driver);

}  // namespace sddp
