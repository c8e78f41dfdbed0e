// SPDX-License-Identifier: Apache-2.0
// `slurm-ddp stacks`: the records each node's part sends back through srun, and the report
// that groups identical stacks, the odd ones out first. Pure.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sddp::stacks {

// One rank's stack as read on its node; `error` non-empty when it could not be read.
struct RankStack {
    std::string host;
    std::optional<long> rank;
    int pid = 0;
    std::string comm;
    std::string tool;
    std::string note;
    std::vector<std::string> frames;
    std::string error;
};

// What one node's part prints: one tab-separated line per fact, each starting with
// "SDDP-STACK\t", so lines of several nodes may interleave (and carry srun's "N: " label).
std::string encode_records(const std::string& host, const std::vector<RankStack>& ranks,
                           const std::vector<std::string>& node_errors);

struct Collected {
    std::vector<RankStack> ranks;
    std::map<std::string, std::vector<std::string>> node_errors;  // host -> messages
    std::vector<std::string> nodes_done;                          // hosts whose part finished
};

// Inverse of encode_records over the output of all nodes; other lines are ignored.
Collected decode_records(std::string_view text);

struct StackGroup {
    std::vector<const RankStack*> members;  // rank order
};

// Ranks with a stack, grouped by identical frames: smallest groups first (the odd ones out),
// then by their lowest rank.
std::vector<StackGroup> group_stacks(const std::vector<RankStack>& ranks);

// "rank 2", "ranks 0-1,3", "pid 77 (python3)" for members without a rank.
std::string describe_members(const std::vector<const RankStack*>& members);

// The groups as text: a header per group (how many, which ranks, where, which tool), then its
// frames.
std::string format_groups(const std::vector<StackGroup>& groups);

}  // namespace sddp::stacks
