// SPDX-License-Identifier: Apache-2.0
// LaunchEnv: the torchrun-compatible environment one task gets from `--ddp`.
//
// derive_launch_env is the single pure function that turns Slurm's facts and the merged options
// into variables. The plugin, the CLI (`slurm-ddp env`) and libbootstrap (when the plugin is
// absent) all call it, so the three can never disagree about a rank.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/base/env_lookup.hpp"
#include "core/base/result.hpp"
#include "core/options/options.hpp"
#include "core/slurm/step_facts.hpp"
#include "core/task/port_block.hpp"

// Where rank 0 runs: node_order.hpp (heterogeneous steps), hostfile.hpp (arbitrary).

namespace sddp {

// Where MASTER_ADDR comes from.
enum class AddrSource { nodelist, het_components, hostfile, option, user };
const char* to_string(AddrSource source);

struct LaunchEnv {
    std::uint32_t rank = 0;
    std::uint32_t world_size = 1;
    std::uint32_t local_rank = 0;
    std::uint32_t local_world_size = 1;
    std::uint32_t node_rank = 0;
    std::uint32_t nnodes = 1;
    std::string master_addr;
    std::uint16_t master_port = 0;
    std::uint16_t ports_last = 0;  // the step's port block is master_port..ports_last
    PortSource port_source = PortSource::derived;
    AddrSource addr_source = AddrSource::nodelist;
    std::string step_tag;  // "<job>.<step>": identifies the step to the rendezvous
    std::vector<EnvAssignment> vars;
};

// Facts the caller gathers by I/O, so that the derivation itself stays pure.
struct LaunchContext {
    // SLURM_HOSTFILE's text, read only under --distribution=arbitrary; when it could not be
    // read, hostfile_problem says why ("is not a regular file", ...).
    std::optional<std::string> hostfile_text;
    std::string hostfile_problem;
    std::optional<std::string> user_master_addr;  // MASTER_ADDR already in the task env
    std::optional<std::string> user_master_port;  // MASTER_PORT already in the task env
};

Result<LaunchEnv> derive_launch_env(const StepFacts& facts, const StepOptions& opts,
                                    const LaunchContext& ctx);

// Which global ranks run on each node of the step, for block, cyclic and plane distributions
// (the verbose table). Arbitrary distributions and heterogeneous steps return an error.
Result<std::vector<std::vector<std::uint32_t>>> ranks_per_node(const StepFacts& facts);

// The names of every variable --ddp may set, for documentation and for the "untouched" tests.
const std::vector<std::string>& launch_variable_names();

}  // namespace sddp
