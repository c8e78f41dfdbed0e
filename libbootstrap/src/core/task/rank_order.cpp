// SPDX-License-Identifier: Apache-2.0
#include "core/task/rank_order.hpp"

#include <algorithm>

#include "core/base/numbers.hpp"
#include "core/task/launch_env.hpp"

namespace sddp {

std::uint32_t ordered_rank(const StepFacts& f, RankOrder order) {
    if (order == RankOrder::block) return f.procid;
    // read_step_facts checked nodeid < nnodes == tasks_per_node.size() and localid < the count.
    std::uint32_t before = 0;
    for (std::uint32_t n = 0; n < f.nodeid && n < f.tasks_per_node.size(); ++n)
        before += f.tasks_per_node[n];
    return before + f.localid;
}

Result<std::vector<std::vector<std::uint32_t>>> ordered_ranks_per_node(const StepFacts& f,
                                                                       RankOrder order) {
    if (order == RankOrder::block) return ranks_per_node(f);
    std::vector<std::vector<std::uint32_t>> out(f.tasks_per_node.size());
    std::uint32_t rank = 0;
    for (std::size_t n = 0; n < f.tasks_per_node.size(); ++n) {
        for (std::uint32_t k = 0; k < f.tasks_per_node[n]; ++k) out[n].push_back(rank++);
    }
    return out;
}

std::size_t rank0_node(const StepFacts& f, RankOrder order, const std::string& master_addr,
                       const std::string& addr_suffix) {
    if (auto layout = ordered_ranks_per_node(f, order)) {
        for (std::size_t n = 0; n < layout->size(); ++n) {
            const auto& ranks = (*layout)[n];
            if (std::find(ranks.begin(), ranks.end(), 0u) != ranks.end()) return n;
        }
    }
    std::string host = master_addr;
    if (!addr_suffix.empty() && host.size() > addr_suffix.size() && host.ends_with(addr_suffix))
        host.resize(host.size() - addr_suffix.size());
    const auto it = std::find(f.nodes.begin(), f.nodes.end(), host);
    return it == f.nodes.end() ? 0 : static_cast<std::size_t>(it - f.nodes.begin());
}

}  // namespace sddp
