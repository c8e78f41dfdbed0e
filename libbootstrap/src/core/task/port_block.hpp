// SPDX-License-Identifier: Apache-2.0
// A block of ports per step: MASTER_PORT .. MASTER_PORT+K-1 (`--ddp=ports=K`, default 4).
//
// Frameworks open MASTER_PORT + k (asynchronous checkpoint processes, extra stores), so one port
// per step is not enough: with consecutive per-step ports, step s's MASTER_PORT+1 is step s+1's
// MASTER_PORT. Every task computes the same block alone, from facts all tasks share:
//   1. `--ddp=port=N`: the block starts at N;
//   2. Slurm's reserved ports (SLURM_STEP_RESV_PORTS): the first K of them, which must be one
//      run of consecutive ports; fewer is an error that names --resv-ports=K when ports=K was
//      given, and with the default K the block is the run Slurm reserved (MpiParams=ports= makes
//      Slurm reserve a few ports for every step unasked);
//   3. otherwise the site's range is cut into slots of K ports (never a node's own ephemeral
//      range: two nodes would then disagree and wait silently until the timeout); the
//      slot is a mixed hash of the job id (congruent ids land far apart) plus the step id (steps
//      of one job take neighbouring slots, hence disjoint blocks
//      when they use the same K).
// A MASTER_PORT the user exported starts the block too (port source "user").
//
// A port that another process happens to hold on rank 0's node is caught there, at launch, by
// master_port_status (the derive pass asks, core/task/task_env).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/base/result.hpp"
#include "core/options/options.hpp"

namespace sddp {

// Where the block comes from, in the order choose_port_block tries them (user first).
enum class PortSource { option, reserved, derived, user };
const char* to_string(PortSource source);

struct PortBlock {
    std::uint16_t first = 0;  // MASTER_PORT
    std::uint16_t last = 0;   // inclusive
    PortSource source = PortSource::derived;
};

struct PortBlockInput {
    std::uint32_t job_id = 0;
    std::uint32_t step_id = 0;
    std::optional<std::string_view> resv_ports;  // SLURM_STEP_RESV_PORTS
    std::optional<std::uint16_t> user_port;      // MASTER_PORT the user exported (validated)
    // The fewest ports the step's options need (--ddp=tf: one per task of the busiest node
    // beside MASTER_PORT). The default block grows to it; a smaller ports=K is refused.
    std::uint32_t min_size = 1;
    std::string_view min_size_for;  // who needs them, for the message ("--ddp=tf")
};

Result<PortBlock> choose_port_block(const PortBlockInput& in, const StepOptions& opts);

// "first-last", the value of SLURM_DDP_PORTS.
std::string port_block_text(const PortBlock& b);

// Rank 0's check of the chosen port on its own node: `bind_errno` is what binding the port gave
// (0: free). A busy port is an error naming the port and the fixes, at once, instead of every
// rank waiting for a server that cannot start.
Status master_port_status(std::uint16_t port, PortSource source, int bind_errno);

}  // namespace sddp
