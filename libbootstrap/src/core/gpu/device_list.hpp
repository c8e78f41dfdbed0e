// SPDX-License-Identifier: Apache-2.0
// CUDA_VISIBLE_DEVICES-style device lists: what Slurm (or a user) wrote, parsed strictly.
//
// Slurm 22.05 writes decimal indices ("0,1"), or each device's unique id when gres.conf has one
// (MIG: "MIG-<uuid>" or the older "MIG-GPU-<uuid>/<gi>/<ci>"); users may also write GPU UUIDs
// ("GPU-8932f937-..."), which CUDA accepts by unique prefix. SLURM_STEP_GPUS and SLURM_JOB_GPUS
// use the same comma syntax with indices only.
//
// CUDA itself silently stops at the first entry it cannot use, so a typo hides GPUs instead of
// failing. We refuse malformed lists with an error that quotes the value, so the plugin never
// builds a binding on top of a list it misread.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/result.hpp"

namespace sddp {

enum class DeviceIdKind { ordinal, uuid, mig };

struct DeviceId {
    DeviceIdKind kind = DeviceIdKind::ordinal;
    int ordinal = -1;  // kind == ordinal only
    std::string text;  // canonical text: ordinals without leading zeros, ids as written
    bool operator==(const DeviceId& o) const { return kind == o.kind && text == o.text; }
};

// Caps: a node has at most a few dozen GPUs (a few hundred MIG slices), so anything larger is
// garbage or an attack on slurmstepd's memory, and is refused as too_large.
inline constexpr std::size_t kMaxDeviceListChars = 16384;
inline constexpr std::size_t kMaxDevices = 1024;
inline constexpr int kMaxDeviceOrdinal = 65535;

// Parses "0,1", "GPU-<hex>", "MIG-..." entries separated by commas; spaces around entries are
// ignored. An empty (or all-blank) list and Slurm's legacy placeholder "NoDevFiles" mean "no
// devices" and give an empty vector. Errors (invalid_input): empty entries ("0,,1", "0,"),
// negative or non-decimal indices, malformed ids, duplicates. `name` is the variable the text
// came from, used in error messages only.
Result<std::vector<DeviceId>> parse_device_list(std::string_view text,
                                                std::string_view name = "CUDA_VISIBLE_DEVICES");

// Like parse_device_list, but every entry must be an index (SLURM_STEP_GPUS, SLURM_JOB_GPUS).
Result<std::vector<int>> parse_index_list(std::string_view text, std::string_view name);

// "a,b,c" from canonical entries: the inverse of parse_device_list for its own output.
std::string format_device_list(const std::vector<DeviceId>& ids);
std::string format_device_list(const std::vector<std::string>& entries);

// The GPU UUID an id refers to ("GPU-..."), for matching against driver facts: a uuid entry
// itself, the parent GPU of an old-style "MIG-GPU-<uuid>/g/c" entry, empty otherwise.
std::string gpu_uuid_of(const DeviceId& id);

}  // namespace sddp
