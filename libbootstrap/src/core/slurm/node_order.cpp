// SPDX-License-Identifier: Apache-2.0
#include "core/slurm/node_order.hpp"

#include <algorithm>
#include <set>

#include "core/base/numbers.hpp"
#include "core/slurm/hostlist.hpp"

namespace sddp {

Result<std::vector<std::string>> nodes_by_nodeid(const StepFacts& f) {
    if (f.het_component_nodelists.empty()) return f.nodes;
    const std::string fix =
        "; cannot tell which node runs rank 0 in this heterogeneous step: give --ddp=addr=HOST "
        "naming the first node of the step's first component";
    const std::set<std::string_view> in_step(f.nodes.begin(), f.nodes.end());
    std::set<std::string> seen;
    std::vector<std::string> order;
    for (std::size_t i = 0; i < f.het_component_nodelists.size(); ++i) {
        auto hosts = expand_hostlist(f.het_component_nodelists[i]);
        if (!hosts) {
            return make_error(hosts.error().code, "SLURM_NODELIST_HET_GROUP_" + std::to_string(i) +
                                                      ": " + hosts.error().message + fix);
        }
        for (auto& h : *hosts) {
            if (in_step.count(h) != 0 && seen.insert(h).second) order.push_back(std::move(h));
        }
    }
    if (order.size() != f.nodes.size()) {
        return make_error(Errc::invalid_input,
                          "the components' node lists (SLURM_NODELIST_HET_GROUP_*) name " +
                              std::to_string(order.size()) + " of the step's " +
                              std::to_string(f.nodes.size()) + " node(s)" + fix);
    }
    if (!f.node_name.empty() && order[f.nodeid] != f.node_name) {
        return make_error(Errc::invalid_input, "SLURM_NODEID=" + std::to_string(f.nodeid) + " on " +
                                                   quote_value(f.node_name) +
                                                   " does not match the components' order, which "
                                                   "puts " +
                                                   quote_value(order[f.nodeid]) + " there" + fix);
    }
    return order;
}

}  // namespace sddp
