// MASTER_PORT: one port per step that every task of the step computes alone, identically.
//
// Tasks cannot talk before the port is known, so the port is a pure function of facts every task
// shares (job id, step id, the step's reserved ports). The common `base + jobid % N` scheme
// collides for jobs whose ids are congruent mod N and for several steps of one job; instead:
//   1. `--ddp=port=N` (explicit) wins;
//   2. Slurm's reserved ports for the step (SLURM_STEP_RESV_PORTS, MpiParams=ports=...) next:
//      Slurm guarantees them unique on the node;
//   3. otherwise a mixed hash of the job id (so congruent ids land far apart) plus the step id
//      (so steps of one job get consecutive, distinct ports), folded into the site's range
//      (plugin argument port-range=, default 20000-29999, below Linux's ephemeral ports).
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

// Every task computes the port alone, so it depends only on facts all tasks share: never on a
// node's own settings such as its ephemeral port range (two nodes would then disagree and wait
// silently until the timeout). A port an outgoing connection happens to hold on rank 0's node
// is caught there by master_port_status instead.
Result<PortChoice> choose_master_port(std::uint32_t job_id, std::uint32_t step_id,
                                      std::optional<std::string_view> resv_ports,
                                      const DdpOptions& opts);

// Rank 0's check of the chosen port on its own node: `bind_errno` is what binding the port gave
// (0: free). A busy port is an error naming the port and the fixes, at once, instead of every
// rank waiting for a server that cannot start.
Status master_port_status(std::uint16_t port, std::string_view source, int bind_errno);

}  // namespace sddp
