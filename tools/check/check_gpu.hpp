// SPDX-License-Identifier: Apache-2.0
// The GPU half of `slurm-ddp check`, exchanged in a second round after the CheckRecords: which
// of the node's GPU device files this task can open, and how its one-element NCCL all-reduce
// went (--nccl). The bus id of the GPU a rank will use goes into its CheckRecord (gpu, gpu_key),
// where core/check/check_verdict already names two ranks on one device.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/base/env_lookup.hpp"
#include "core/base/result.hpp"
#include "core/check/check_verdict.hpp"
#include "core/task/identity.hpp"

namespace sddp::check {

struct GpuFacts {
    bool uses_gpu = false;             // CUDA_VISIBLE_DEVICES names a GPU for this task
    std::vector<int> opened;           // N of the /dev/nvidiaN this task can open
    std::vector<std::string> blocked;  // "/dev/nvidia1: Operation not permitted"
    std::string nccl;                  // "": not run; "ok": the all-reduce's sum was right
    std::string nccl_detail;           // the sum, or the error
    bool operator==(const GpuFacts&) const = default;
};

inline constexpr std::size_t kGpuFactsBytes = 1024;
std::vector<std::uint8_t> encode_gpu_facts(const GpuFacts& f);
GpuFacts decode_gpu_facts(std::span<const std::uint8_t> bytes);

// Tries to open every nvidiaN under `dir` ("/dev" on a node; a directory of the test's own in
// tests). A file that exists and does not open is blocked: under Slurm's device cgroup (task/
// cgroup with ConstrainDevices) a task gets EPERM on the GPUs of its siblings.
void probe_device_files(const std::string& dir, GpuFacts& f);

// The index into this task's CUDA_VISIBLE_DEVICES of the GPU the library would use, by the very
// rule sddp_init applies (core/gpu/device_choice.hpp, the plugin's binding rules), with the list's
// length standing in for cudaGetDeviceCount; the error is the one sddp_init would give.
Result<int> check_device(const Identity& id, const EnvLookup& env);

// The bus id of the GPU this rank will use (cudaDeviceGetPCIBusId of visible device `device`, on
// a thread given up after `budget`), into r.gpu and r.gpu_key, so that two ranks of one host
// naming one GPU differently (an index and a UUID) are still caught.
void add_bus_id(int device, CheckRecord& r, std::chrono::milliseconds budget);

// Pure: one warning per node where tasks that use GPUs cannot open each other's GPU device
// files: NCCL then loses CUDA IPC and P2P/NVLink between them.
std::vector<std::string> isolation_warnings(const std::vector<CheckRecord>& records,
                                            const std::vector<GpuFacts>& facts);
// Pure: one problem per rank whose all-reduce failed.
std::vector<CheckProblem> nccl_problems(const std::vector<CheckRecord>& records,
                                        const std::vector<GpuFacts>& facts);
// Pure: one line per rank that ran the all-reduce ("nccl: rank 0 on n1 (GPU ...): ok, sum 3").
std::string nccl_lines(const std::vector<CheckRecord>& records, const std::vector<GpuFacts>& facts);

}  // namespace sddp::check
