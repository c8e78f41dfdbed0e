// SPDX-License-Identifier: Apache-2.0
#include "rendezvous/protocol/join_accounting.hpp"

#include <algorithm>

namespace sddp {
namespace {

std::string str(int v) {
    return std::to_string(v);
}

}  // namespace

JoinAccounting::JoinAccounting(bool root, int world_size, int local_world_size, int own_rank,
                               int node_rank, std::vector<int> child_nodes)
    : root_(root),
      world_(std::max(world_size, 1)),
      local_world_(std::clamp(local_world_size, 1, world_)),
      own_rank_(own_rank),
      node_rank_(node_rank),
      child_nodes_(std::move(child_nodes)) {
    child_joined_.assign(child_nodes_.size(), 0);
    child_complete_.assign(child_nodes_.size(), 0);
    if (root_ || tree()) {
        owner_.assign(static_cast<std::size_t>(world_), 0);
        if (own_rank_ >= 0 && own_rank_ < world_)
            owner_[static_cast<std::size_t>(own_rank_)] = kSelf;
        known_ = 1;
    }
    local_rank_of_.assign(static_cast<std::size_t>(local_world_), -1);
    local_rank_of_[0] = own_rank;
}

std::optional<std::string> JoinAccounting::check_direct(int rank, int local_rank,
                                                        int local_world_size, int node_rank) const {
    if (rank < 0 || rank >= world_) {
        return "rank " + str(rank) + " is out of range for world size " + str(world_);
    }
    if (rank == own_rank_) return "rank " + str(rank) + " is this rank";
    // Over TCP only node leaders (or every rank, without local information) reach rank 0.
    if (!root_ && !tree()) return "this rank does not accept TCP peers";
    if (local_world_size < 1 || local_rank != 0) {
        return "rank " + str(rank) + " is local rank " + str(local_rank) +
               " and must join through its node leader";
    }
    if (owner_[static_cast<std::size_t>(rank)] != 0) {
        return "duplicate rank " + str(rank) + ": it has already joined";
    }
    if (tree()) {
        const auto it = std::find(child_nodes_.begin(), child_nodes_.end(), node_rank);
        if (it == child_nodes_.end()) {
            return "rank " + str(rank) + " leads node " + str(node_rank) +
                   ", which is not a child of node " + str(node_rank_) + " in the leaders' tree";
        }
        if (child_joined_[static_cast<std::size_t>(it - child_nodes_.begin())]) {
            return "duplicate node leader for node " + str(node_rank) + ": it has already joined";
        }
    }
    if (!root_) return std::nullopt;
    // Compared as a difference of two in-range counts: `known_ + local_world_size` would
    // overflow on a peer that claims to lead 2^31-1 ranks.
    if (local_world_size > world_ - known_) {
        return "rank " + str(rank) + " leads " + str(local_world_size) +
               " local ranks, more than the " + str(world_ - known_) + " still expected";
    }
    return std::nullopt;
}

void JoinAccounting::add_direct(Via via, int rank, int local_world_size, int node_rank) {
    owner_[static_cast<std::size_t>(rank)] = via;
    ++known_;
    // In the tree every child leader reports its subtree, even a leader alone on its node.
    if (local_world_size > 1 || tree()) leaders_[via] = LeaderProgress{rank, local_world_size, 0};
    const auto it = std::find(child_nodes_.begin(), child_nodes_.end(), node_rank);
    if (it != child_nodes_.end()) {
        const auto i = static_cast<std::size_t>(it - child_nodes_.begin());
        child_joined_[i] = 1;
        child_of_[via] = i;
    }
}

std::optional<std::string> JoinAccounting::subtree_complete(Via via) {
    const auto it = child_of_.find(via);
    if (it == child_of_.end() || child_complete_[it->second]) {
        return "reports its subtree complete, but it is not a child node leader or said so "
               "before";
    }
    child_complete_[it->second] = 1;
    return std::nullopt;
}

std::optional<std::string> JoinAccounting::check_local(int rank, int local_rank,
                                                       int local_world_size, int node_rank) const {
    if (rank < 0 || rank >= world_) {
        return "rank " + str(rank) + " is out of range for world size " + str(world_);
    }
    if (rank == own_rank_) return "rank " + str(rank) + " is this rank";
    if (node_rank != node_rank_ || local_world_size != local_world_ || local_rank < 1 ||
        local_rank >= local_world_) {
        return "rank " + str(rank) + " (local rank " + str(local_rank) + " of " +
               str(local_world_size) + ", node " + str(node_rank) + ") does not belong to node " +
               str(node_rank_) + " (" + str(local_world_) + " local ranks)";
    }
    if (local_rank_of_[static_cast<std::size_t>(local_rank)] >= 0) {
        return "duplicate local rank " + str(local_rank) + " on node " + str(node_rank_);
    }
    if (std::find(local_rank_of_.begin(), local_rank_of_.end(), rank) != local_rank_of_.end()) {
        return "duplicate rank " + str(rank);
    }
    if (!owner_.empty() && owner_[static_cast<std::size_t>(rank)] != 0) {
        return "duplicate rank " + str(rank);
    }
    return std::nullopt;
}

void JoinAccounting::add_local(Via via, int rank, int local_rank) {
    local_rank_of_[static_cast<std::size_t>(local_rank)] = rank;
    ++locals_joined_;
    if (!owner_.empty()) {
        owner_[static_cast<std::size_t>(rank)] = via;
        ++known_;
    }
}

std::optional<std::string> JoinAccounting::report_local(Via via, int rank) {
    const auto leader = leaders_.find(via);
    // A star's leader reports its own node's locals only; a tree's, anyone in its subtree (the
    // duplicate check below still bounds the total by the world size).
    const bool fits =
        leader != leaders_.end() &&
        (tree() || leader->second.locals_joined < leader->second.local_world_size - 1);
    if (owner_.empty() || rank <= 0 || rank >= world_ ||
        owner_[static_cast<std::size_t>(rank)] != 0 || !fits) {
        return "reports rank " + str(rank) +
               ", which is out of range, already joined elsewhere, or one more than its local "
               "world size";
    }
    owner_[static_cast<std::size_t>(rank)] = via;
    ++leader->second.locals_joined;
    ++known_;
    return std::nullopt;
}

bool JoinAccounting::complete() const {
    if (root_ && known_ < world_) return false;
    for (const char c : child_complete_) {
        if (!c) return false;
    }
    return locals_joined_ >= local_world_ - 1;
}

std::vector<int> JoinAccounting::missing_ranks() const {
    std::vector<int> out;
    for (std::size_t r = 0; r < owner_.size(); ++r) {
        if (owner_[r] == 0) out.push_back(static_cast<int>(r));
    }
    return out;
}

std::vector<int> JoinAccounting::missing_child_nodes() const {
    std::vector<int> out;
    for (std::size_t i = 0; i < child_nodes_.size(); ++i) {
        if (!child_joined_[i]) out.push_back(child_nodes_[i]);
    }
    return out;
}

std::vector<int> JoinAccounting::incomplete_child_nodes() const {
    std::vector<int> out;
    for (std::size_t i = 0; i < child_nodes_.size(); ++i) {
        if (child_joined_[i] && !child_complete_[i]) out.push_back(child_nodes_[i]);
    }
    return out;
}

std::vector<int> JoinAccounting::missing_local_ranks() const {
    std::vector<int> out;
    for (std::size_t l = 1; l < local_rank_of_.size(); ++l) {
        if (local_rank_of_[l] < 0) out.push_back(static_cast<int>(l));
    }
    return out;
}

std::vector<int> JoinAccounting::ranks_via(Via via) const {
    std::vector<int> out;
    const auto leader = leaders_.find(via);
    if (leader != leaders_.end()) out.push_back(leader->second.rank);
    for (std::size_t r = 0; r < owner_.size(); ++r) {
        if (owner_[r] == via &&
            (leader == leaders_.end() || static_cast<int>(r) != leader->second.rank)) {
            out.push_back(static_cast<int>(r));
        }
    }
    return out;
}

std::vector<std::pair<JoinAccounting::Via, JoinAccounting::LeaderProgress>>
JoinAccounting::incomplete_leaders() const {
    std::vector<std::pair<Via, LeaderProgress>> out;
    for (const auto& [via, p] : leaders_) {
        if (p.locals_joined < p.local_world_size - 1) out.emplace_back(via, p);
    }
    return out;
}

}  // namespace sddp
