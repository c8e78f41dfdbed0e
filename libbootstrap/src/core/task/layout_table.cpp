// SPDX-License-Identifier: Apache-2.0
#include "core/task/layout_table.hpp"

#include <algorithm>
#include <array>
#include <cstdint>

#include "core/task/rank_order.hpp"
namespace sddp {
namespace {

std::string pad(const std::string& s, std::size_t width) {
    return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}

}  // namespace

std::string format_layout_table(const StepFacts& f, const LaunchEnv& e, const StepOptions& opts,
                                const LocalGpuDescriber& gpus_here, std::size_t max_rows) {
    std::string out;
    out += "slurm-ddp: step " + e.step_tag + ": WORLD_SIZE=" + std::to_string(e.world_size) +
           " on " + std::to_string(e.nnodes) + " node(s), MASTER_ADDR=" + e.master_addr + " (" +
           to_string(e.addr_source) + ") MASTER_PORT=" + std::to_string(e.master_port) + " (" +
           to_string(e.port_source) + ") ports " + std::to_string(e.master_port) + "-" +
           std::to_string(e.ports_last);
    const std::string described = describe_options(opts);
    if (!described.empty()) out += ", options " + described;
    out += "\n";

    auto layout = ordered_ranks_per_node(f, opts.rank_order);
    if (!layout) {
        out += "slurm-ddp: per-rank table unavailable: " + layout.error().message + "\n";
        return out;
    }
    // Rows sorted by rank: (rank, node index, local rank).
    std::vector<std::array<std::uint32_t, 3>> rows;
    rows.reserve(f.ntasks);
    for (std::uint32_t n = 0; n < layout->size(); ++n) {
        const auto& ranks = (*layout)[n];
        for (std::uint32_t l = 0; l < ranks.size(); ++l) rows.push_back({ranks[l], n, l});
    }
    std::sort(rows.begin(), rows.end());

    std::size_t host_w = 4;
    for (const auto& h : f.nodes) host_w = std::max(host_w, h.size());
    out += "slurm-ddp: GPUS as bound with " + f.node_name +
           "'s allocation; each node binds its own step GPUs the same way\n";
    out += "  " + pad("RANK", 6) + pad("HOST", host_w + 2) + pad("NODE_RANK", 11) +
           pad("LOCAL_RANK", 12) + "GPUS\n";
    const std::size_t shown = std::min(rows.size(), max_rows);
    for (std::size_t i = 0; i < shown; ++i) {
        const auto [rank, node, local] = rows[i];
        const std::string gpus =
            gpus_here ? gpus_here(local, static_cast<std::uint32_t>((*layout)[node].size())) : "-";
        out += "  " + pad(std::to_string(rank), 6) + pad(f.nodes[node], host_w + 2) +
               pad(std::to_string(node), 11) + pad(std::to_string(local), 12) + gpus + "\n";
    }
    if (shown < rows.size()) {
        out += "  ... " + std::to_string(rows.size() - shown) + " more rank(s)\n";
    }
    return out;
}

}  // namespace sddp
