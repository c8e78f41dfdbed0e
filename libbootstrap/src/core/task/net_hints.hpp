// SPDX-License-Identifier: Apache-2.0
// `--ddp=net-hints` for gloo: GLOO_SOCKET_IFNAME, one concrete interface name (gloo takes no
// NCCL-style "^lo" lists), the one this node reaches the step's peers through.
//
// Without it gloo binds to whatever the host name resolves to; on Debian/Ubuntu that is often
// 127.0.1.1 and multi-node gloo fails ("connectFullMesh failed"). The interface is found by
// asking the kernel which local address it would use towards a peer (a connected UDP socket
// sends nothing) and naming the interface that holds that address. The peer is MASTER_ADDR, or,
// on the master's own node (where the route to itself is local), another node of the step.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/env_lookup.hpp"
#include "core/slurm/step_facts.hpp"
#include "core/task/launch_env.hpp"

namespace sddp {

struct InterfaceAddress {
    std::string name;     // "eth0"
    std::string address;  // numeric, as inet_ntop writes it
    bool loopback = false;
};

// The host to probe the route towards, or nullopt when no hint is needed (one node).
std::optional<std::string> net_hint_peer(const StepFacts& facts, const LaunchEnv& launch);

// The interface holding `local_address`; nullopt when none does or it is a loopback interface
// (a loopback name would make gloo unreachable from other nodes).
std::optional<std::string> interface_for_address(const std::vector<InterfaceAddress>& interfaces,
                                                 std::string_view local_address);

// GLOO_SOCKET_IFNAME=`ifname`, keeping a value the user exported.
std::vector<EnvAssignment> gloo_hint_env(const std::optional<std::string>& ifname);

// GLOO_SOCKET_IFNAME and NCCL_SOCKET_IFNAME ("=ifname", an exact match) both naming the one
// interface this node reaches its peers through: the same on every rank of the node, and the
// same for gloo and for NCCL's bootstrap and socket transport; each keeps a value the user
// exported.
std::vector<EnvAssignment> socket_hint_env(const std::optional<std::string>& ifname);

// The names --ddp=net-hints may set, as the option table lists them: socket_hint_env's, and
// UCX_NET_DEVICES, which the GPU binding sets.
const std::vector<std::string>& net_hints_variable_names();

}  // namespace sddp
