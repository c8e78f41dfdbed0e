// The few facts sddp_init reads from the machine (kept apart so identity stays pure).
#pragma once

#include <optional>
#include <string>

#include "core/env_lookup.hpp"
#include "core/options.hpp"

namespace sddp::api {

std::string host_name();
// /proc/sys/net/ipv4/ip_local_port_range, as the plugin reads it (same derived MASTER_PORT).
std::optional<PortRange> ephemeral_ports();
// First host of SLURM_HOSTFILE when it is set and readable (arbitrary distribution).
std::optional<std::string> hostfile_first_host(const EnvLookup& env);

}  // namespace sddp::api
