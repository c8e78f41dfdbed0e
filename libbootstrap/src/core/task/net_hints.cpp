// SPDX-License-Identifier: Apache-2.0
#include "core/task/net_hints.hpp"

#include "core/options/options.hpp"

namespace sddp {

std::optional<std::string> net_hint_peer(const StepFacts& f, const LaunchEnv& launch) {
    if (f.nodes.size() < 2) return std::nullopt;
    // The master's node: MASTER_ADDR may resolve to this host's own (even loopback) address,
    // which says nothing about the path other nodes use. Ask for the route to another node.
    const bool on_master_node =
        launch.master_addr == f.node_name ||
        (f.nodeid < f.nodes.size() && launch.master_addr == f.nodes[f.nodeid]) ||
        (f.nodeid == 0 && launch.addr_source == AddrSource::nodelist);
    if (on_master_node) return f.nodeid == 0 ? f.nodes[1] : f.nodes[0];
    return launch.master_addr;
}

std::optional<std::string> interface_for_address(const std::vector<InterfaceAddress>& interfaces,
                                                 std::string_view local_address) {
    for (const auto& i : interfaces) {
        if (i.address != local_address) continue;
        if (i.loopback) return std::nullopt;
        return i.name;
    }
    return std::nullopt;
}

std::vector<EnvAssignment> gloo_hint_env(const std::optional<std::string>& ifname) {
    if (!ifname || ifname->empty()) return {};
    return {EnvAssignment{"GLOO_SOCKET_IFNAME", *ifname, true}};
}

std::vector<EnvAssignment> socket_hint_env(const std::optional<std::string>& ifname) {
    auto out = gloo_hint_env(ifname);
    // "=" makes NCCL match the name exactly (eth1 would otherwise also select eth10).
    if (!out.empty()) out.push_back(EnvAssignment{"NCCL_SOCKET_IFNAME", "=" + *ifname, true});
    return out;
}

const std::vector<std::string>& net_hints_variable_names() {
    static const std::vector<std::string> kNames = option_variable_names("net-hints");
    return kNames;
}

}  // namespace sddp
