// SPDX-License-Identifier: Apache-2.0
// `slurm-ddp stacks --local`: the programs this node offers for reading stacks (py-spy, gdb with
// the interpreter's extension, eu-stack) and scontrol, under the root rule of stacks_trust.hpp
// when run as root.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "stacks/stacks_targets.hpp"

namespace sddp::stacks {

struct NodeTools {
    bool as_root = false;
    std::optional<std::string> our_pyspy;  // our SLURM_DDP_PYSPY
    std::optional<std::string> our_path;   // our PATH
    std::string gdb;                       // resolved when as_root; "" when none fits
    std::string gdb_datadir;               // where gdb keeps its auto-load folder
    std::string eu_stack;
    std::string scontrol;
    std::vector<std::string> refused;  // tools on PATH that failed the root rule, and why
};

// Looks at our own environment and PATH only (read before any thread starts).
NodeTools find_node_tools();

// The tools for one process; `refused` gets the py-spy candidates that failed the root rule.
ToolsFound tools_for(const NodeTools& node, const ProcessFacts& p,
                     std::vector<std::string>& refused);

}  // namespace sddp::stacks
