// SPDX-License-Identifier: Apache-2.0
// The shape of the TCP rendezvous tree among node leaders: a k-ary tree over node indices.
//
// Why: with every node leader a direct child of rank 0, rank 0 sends an all-gather's whole
// result to every node (O(N x nodes) bytes from one socket) and admits every leader itself. In
// a k-ary heap over node indices (node 0 holds rank 0) node n > 0 joins node (n-1)/k and serves
// nodes k*n+1 .. k*n+k, so no leader talks to more than k+1 others and the depth is
// ceil(log_k(nodes)). With nodes <= k+1 the tree is today's star. Pure: no I/O.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/base/env_lookup.hpp"
#include "core/base/result.hpp"
#include "core/task/identity.hpp"

namespace sddp {

inline constexpr int kMinTreeFanout = 2;
inline constexpr int kMaxTreeFanout = 4096;

// Node `node`'s parent node, -1 for node 0.
int tree_parent(int node, int fanout);
// The child nodes of `node` among `nodes`, in increasing order.
std::vector<int> tree_children(int node, int nodes, int fanout);
// Position among its parent's children (0-based): join pacing spaces out siblings, not nodes.
int tree_sibling_index(int node, int fanout);
// Links on the longest path from node 0 to a leaf (0 for a single node).
int tree_depth(int nodes, int fanout);

// SLURM_DDP_TREE_FANOUT, or the default. Out-of-range or garbage values are errors.
Result<int> read_tree_fanout(const EnvLookup& env);

// The host of each node index, in SLURM_NODEID order (node_order.hpp: heterogeneous steps
// included), when every rank can be sure that its node index is Slurm's: the identity comes from
// srun --ddp or from Slurm itself (not from a launcher inside the step: torchrun's workers carry
// TORCHELASTIC_USE_AGENT_STORE, and its c10d rendezvous numbers nodes in arrival order), this
// rank's node index is its SLURM_NODEID, the step has exactly `id.num_nodes` nodes, and node 0
// is `master_addr` (rank 0's host). nullopt otherwise: the rendezvous is a star around rank 0,
// as it always is with at most fanout + 1 nodes.
std::optional<std::vector<std::string>> leader_hosts(const EnvLookup& env, const Identity& id,
                                                     const std::string& master_addr);

}  // namespace sddp
