// MASTER_PORT: one port per step that every task of the step computes alone, identically.
//
// Tasks cannot talk before the port is known, so the port is a pure function of facts every task
// shares (job id, step id, the step's reserved ports). The common `base + jobid % N` scheme
// collides for jobs whose ids are congruent mod N and for several steps of one job; instead:
//   1. `--ddp=port=N` (explicit) wins;
//   2. Slurm's reserved ports for the step (SLURM_STEP_RESV_PORTS, MpiParams=ports=...) next:
//      Slurm guarantees them unique on the node;
//   3. otherwise a mixed hash of the job id (so congruent ids land far apart) plus the step id
//      (so steps of one job get consecutive, distinct ports), folded into the site's range with the
//      kernel's ephemeral range cut out (an outgoing connection could hold any ephemeral port).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/options.hpp"
#include "core/result.hpp"

namespace sddp {

struct PortChoice {
    std::uint16_t port = 0;
    std::string source;  // "option", "reserved", "derived": shown by --ddp=verbose
};

// Parse /proc/sys/net/ipv4/ip_local_port_range ("32768\t60999").
std::optional<PortRange> parse_ephemeral_range(std::string_view text);

// The usable part of `site` once `ephemeral` is cut out: the larger of the pieces below and above.
Result<PortRange> usable_port_range(PortRange site, std::optional<PortRange> ephemeral);

// `het_offset` separates concurrent steps of different components of one heterogeneous job.
Result<PortChoice> choose_master_port(std::uint32_t job_id, std::uint32_t step_id,
                                      std::uint32_t het_offset,
                                      std::optional<std::string_view> resv_ports,
                                      const DdpOptions& opts, std::optional<PortRange> ephemeral);

}  // namespace sddp
