// SPDX-License-Identifier: Apache-2.0
#include "rendezvous/protocol/leader_tree.hpp"

#include <algorithm>
#include <cstdint>

#include "core/base/numbers.hpp"
#include "core/contract/contract.hpp"
#include "core/slurm/node_order.hpp"
#include "core/slurm/step_facts.hpp"

namespace sddp {

int tree_parent(int node, int fanout) {
    if (node <= 0) return -1;
    return (node - 1) / std::max(fanout, 1);
}

std::vector<int> tree_children(int node, int nodes, int fanout) {
    std::vector<int> out;
    const long long k = std::max(fanout, 1);
    for (long long c = k * node + 1; c <= k * node + k && c < nodes; ++c) {
        out.push_back(static_cast<int>(c));
    }
    return out;
}

int tree_sibling_index(int node, int fanout) {
    if (node <= 0) return 0;
    return (node - 1) % std::max(fanout, 1);
}

int tree_depth(int nodes, int fanout) {
    int depth = 0;
    for (int deepest = nodes - 1; deepest > 0; deepest = tree_parent(deepest, fanout)) ++depth;
    return depth;
}

Result<int> read_tree_fanout(const EnvLookup& env) {
    const auto v = env(contract::kTreeFanoutVar);
    if (!v || v->empty()) return contract::kTreeFanoutDefault;
    const auto n = parse_decimal(*v, kMaxTreeFanout);
    if (!n || *n < static_cast<std::uint64_t>(kMinTreeFanout)) {
        return make_error(Errc::invalid_input,
                          std::string(contract::kTreeFanoutVar) + "=" + quote_value(*v) +
                              " is not a fanout of " + std::to_string(kMinTreeFanout) + ".." +
                              std::to_string(kMaxTreeFanout) + "; fix it or unset it for " +
                              std::to_string(contract::kTreeFanoutDefault));
    }
    return static_cast<int>(*n);
}

std::optional<std::vector<std::string>> leader_hosts(const EnvLookup& env, const Identity& id,
                                                     const std::string& master_addr) {
    const bool from_slurm = id.source == IdentitySource::slurm ||
                            (id.source == IdentitySource::ddp && env(contract::kStepVar) &&
                             !env("TORCHELASTIC_USE_AGENT_STORE"));
    if (!from_slurm || !id.locality_known || !id.node_rank || !id.num_nodes || *id.num_nodes < 2 ||
        master_addr.empty()) {
        return std::nullopt;
    }
    auto facts = read_step_facts(env);
    if (!facts || facts->nodeid != *id.node_rank || facts->nodes.size() != *id.num_nodes) {
        return std::nullopt;
    }
    auto hosts = nodes_by_nodeid(*facts);
    if (!hosts || hosts->front() != master_addr) return std::nullopt;
    return std::move(*hosts);
}

}  // namespace sddp
