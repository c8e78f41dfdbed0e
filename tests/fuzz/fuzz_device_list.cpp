// SPDX-License-Identifier: Apache-2.0
// Properties: parsing a CUDA_VISIBLE_DEVICES-style list never crashes; an accepted list formats
// to text that parses back to the same list; bind_gpus on arbitrary Slurm values either fails
// with a message or returns a binding whose device index points into its visible list.
//
// Input layout: the whole input is one list for the parser; for bind_gpus it is split at '\n'
// into task CUDA_VISIBLE_DEVICES, task SLURM_STEP_GPUS, step CUDA_VISIBLE_DEVICES, step
// SLURM_STEP_GPUS, SLURM_GPUS_ON_NODE, and the first two bytes choose rank, tasks and policy.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/gpu/device_list.hpp"
#include "core/gpu/gpu_binding.hpp"

namespace {

void require(bool ok, const char* what, std::string_view input) {
    if (ok) return;
    std::fprintf(stderr, "property violated: %s\ninput: '%.*s'\n", what,
                 static_cast<int>(input.size()), input.data());
    std::abort();
}

std::vector<std::optional<std::string>> split_fields(std::string_view s, std::size_t n) {
    std::vector<std::optional<std::string>> out(n);
    for (std::size_t i = 0; i < n && !s.empty(); ++i) {
        const auto nl = s.find('\n');
        const std::string_view field = s.substr(0, nl);
        if (field != "-") out[i] = std::string(field);  // "-" stands for "unset"
        if (nl == std::string_view::npos) break;
        s.remove_prefix(nl + 1);
    }
    return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view input(reinterpret_cast<const char*>(data), size);

    auto list = sddp::parse_device_list(input);
    if (list.ok()) {
        const std::string text = sddp::format_device_list(*list);
        auto again = sddp::parse_device_list(text);
        require(again.ok(), "formatted list does not parse", input);
        require(*again == *list, "formatted list parses to a different list", input);
        require(list->size() <= sddp::kMaxDevices, "list longer than the cap", input);
    } else {
        require(!list.error().message.empty(), "error without a message", input);
    }
    (void)sddp::parse_index_list(input, "SLURM_STEP_GPUS");

    if (size < 2) return 0;
    sddp::GpuBindingInput in;
    in.local_world_size = 1 + data[0] % 16;
    in.local_rank = data[1] % in.local_world_size;
    in.policy = static_cast<sddp::GpuBindPolicy>((data[0] >> 4) % 4);
    in.allow_share = (data[1] & 0x80) != 0;
    const auto f = split_fields(input.substr(2), 5);
    in.slurm.task_visible = f[0];
    in.slurm.task_gpus = f[1];
    in.slurm.step_visible = f[2];
    in.slurm.step_gpus = f[3];
    in.slurm.gpus_on_node = f[4];
    auto b = sddp::bind_gpus(in);
    if (!b.ok()) {
        require(!b.error().message.empty(), "binding error without a message", input);
        return 0;
    }
    if (b->changed) {
        require(
            b->device_index >= 0 && static_cast<std::size_t>(b->device_index) < b->visible.size(),
            "device index outside the visible list", input);
        require(b->visible[static_cast<std::size_t>(b->device_index)] == b->own,
                "device index does not point at the own GPU", input);
    } else {
        require(b->env.empty(), "unchanged binding sets variables", input);
    }
    return 0;
}
