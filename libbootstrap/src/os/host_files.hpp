// Small files the launch environment depends on, read the same way by the plugin, the CLI and
// the library, so that all three derive the same MASTER_ADDR and MASTER_PORT.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "core/env_lookup.hpp"
#include "core/launch_env.hpp"
#include "core/options.hpp"
#include "core/step_facts.hpp"

namespace sddp {

// At most `limit` bytes of a file (procfs, a host file); nullopt when it cannot be opened.
// Plain read(2): no exceptions, no streams, nothing unbounded.
std::optional<std::string> read_small_file(const std::string& path, std::size_t limit);

// /proc/sys/net/ipv4/ip_local_port_range, parsed.
std::optional<PortRange> read_ephemeral_ports();

// First host named in the host file at `path` (SLURM_HOSTFILE), when set and readable.
std::optional<std::string> read_hostfile_first_host(const std::optional<std::string>& path);

// Everything derive_launch_env needs beyond the environment: the ephemeral range, the host
// file's first host, and MASTER_ADDR/MASTER_PORT the user exported.
LaunchContext gather_launch_context(const EnvLookup& env, const StepFacts& facts);

}  // namespace sddp
