// SPDX-License-Identifier: Apache-2.0
// Small files the launch environment depends on, read the same way by the plugin, the CLI and
// the library, so that all three derive the same MASTER_ADDR and MASTER_PORT.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "core/base/env_lookup.hpp"
#include "core/options/options.hpp"
#include "core/slurm/step_facts.hpp"
#include "core/task/identity.hpp"
#include "core/task/launch_env.hpp"

namespace sddp {

// At most `limit` bytes of a file (procfs, a host file); nullopt when it cannot be opened.
// Plain read(2): no exceptions, no streams, nothing unbounded.
std::optional<std::string> read_small_file(const std::string& path, std::size_t limit);

// SLURM_HOSTFILE's text, or why it cannot be read. Read only when `distribution` is arbitrary
// (Slurm uses the file for nothing else), and never blocking: opened O_NONBLOCK so a FIFO does not
// wait for a writer, refused unless a regular file of at most kMaxHostfileBytes. A hard NFS mount
// that hangs can still stall open(2) itself; no portable call bounds that.
inline constexpr std::size_t kMaxHostfileBytes = 1 << 20;
struct HostfileText {
    std::optional<std::string> text;
    std::string problem;  // "is not a regular file", ...: for the error message
};
HostfileText read_hostfile(std::string_view distribution, const std::optional<std::string>& path);

// Everything derive_launch_env needs beyond the environment: the host file (arbitrary
// distribution only) and MASTER_ADDR/MASTER_PORT the user exported.
LaunchContext gather_launch_context(const EnvLookup& env, const StepFacts& facts);

// What detect_identity needs from the host beyond the environment (the host file), read the same
// way by sddp_init and `slurm-ddp check` so both derive the same MASTER_ADDR and port.
IdentityInputs gather_identity_inputs(const EnvLookup& env);

// errno of binding TCP `port` on every address (as rank 0's server will), 0 when it is free.
int probe_port_bind(std::uint16_t port);

}  // namespace sddp
