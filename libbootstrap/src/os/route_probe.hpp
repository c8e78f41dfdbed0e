// SPDX-License-Identifier: Apache-2.0
// The local side of the route towards a host, for GLOO_SOCKET_IFNAME (core/task/net_hints.hpp).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "core/task/net_hints.hpp"

namespace sddp {

// This host's interfaces with their IPv4/IPv6 addresses (getifaddrs), up interfaces only.
std::vector<InterfaceAddress> read_interface_addresses();

// How long task_init waits for the look-up of the peer's name: a dead DNS server would
// otherwise hold the task's launch for the resolver's retries (tens of seconds). The hint is
// optional: past this the task starts without it.
inline constexpr std::chrono::milliseconds kRouteLookupTimeout{2000};

// The local address the kernel would use to reach `host` (resolved with getaddrinfo, given up
// after `timeout`; a connected UDP socket sends nothing). nullopt when it does not resolve in
// time or has no route.
std::optional<std::string> local_address_towards(
    const std::string& host, std::chrono::milliseconds timeout = kRouteLookupTimeout);

// Both together: the interface name for GLOO_SOCKET_IFNAME, or nullopt (with `why` set).
std::optional<std::string> interface_towards(const std::string& host, std::string* why);

}  // namespace sddp
