// SPDX-License-Identifier: Apache-2.0
// Who has joined the rendezvous, and whether a newcomer fits: the bookkeeping of the join, with
// no sockets in it. Rank 0 records which link (an opaque id) every rank arrived through; a node
// leader records which of its node's local ranks have joined it. Every claim a peer makes (its
// rank, how many ranks it leads) is checked here against what is still expected, in arithmetic
// that cannot overflow whatever an authenticated but confused peer sends.
//
// In the leaders' tree (rendezvous/protocol/leader_tree.hpp) a node leader also accepts the leaders
// of its child nodes over TCP, and every leader reports each rank that joined its subtree to its
// parent, so rank 0 still knows exactly which ranks are missing and through which child they would
// come.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace sddp {

class JoinAccounting {
  public:
    using Via = std::uint64_t;  // the link a rank came through; 0 is "nobody"
    static constexpr Via kSelf = ~Via{0};

    // `root`: this is rank 0 and counts the whole world. `local_world_size` > 1: this rank also
    // serves its node's other ranks (local ranks 1..local_world_size-1) on the node-local socket.
    // `child_nodes`: the nodes whose leaders join this rank over TCP in the leaders' tree; empty
    // on a leaf, and on rank 0 of a star (then any node leader may come).
    JoinAccounting(bool root, int world_size, int local_world_size, int own_rank, int node_rank,
                   std::vector<int> child_nodes = {});

    // A peer over TCP (root, or a tree parent): `rank`, local rank `local_rank` of node
    // `node_rank` of `local_world_size` ranks, which it leads. Returns why it must be refused.
    std::optional<std::string> check_direct(int rank, int local_rank, int local_world_size,
                                            int node_rank = -1) const;
    void add_direct(Via via, int rank, int local_world_size, int node_rank = -1);

    // A local rank over the node-local socket (root or node leader), with what it believes
    // about its node.
    std::optional<std::string> check_local(int rank, int local_rank, int local_world_size,
                                           int node_rank) const;
    void add_local(Via via, int rank, int local_rank);

    // Root or tree parent: node leader `via` reports that `rank` joined it (in the tree: joined
    // its subtree). Returns why the report is impossible (the caller fails the job: a leader
    // does not lie by accident), or nullopt.
    std::optional<std::string> report_local(Via via, int rank);

    // Tree: child leader `via` says its whole subtree has joined. Why that is impossible, or
    // nullopt.
    std::optional<std::string> subtree_complete(Via via);
    // Root: everyone is known; elsewhere: the locals and (tree) every child subtree are in.
    bool complete() const;
    int known() const { return known_; }
    int world_size() const { return world_; }
    std::vector<int> missing_ranks() const;        // root: ranks nobody brought
    std::vector<int> missing_local_ranks() const;  // local ranks not yet joined here
    int locals_joined() const { return locals_joined_; }
    std::vector<int> ranks_via(Via via) const;  // the leader's rank and those behind it
    bool tree() const { return !child_nodes_.empty(); }
    std::vector<int> missing_child_nodes() const;     // tree: child nodes whose leader is not in
    std::vector<int> incomplete_child_nodes() const;  // tree: joined, subtree not yet complete

    struct LeaderProgress {
        int rank = 0;
        int local_world_size = 1;
        int locals_joined = 0;  // excluding the leader itself (tree: its whole subtree)
    };
    // Root: node leaders (over TCP, leading more than themselves) whose locals are incomplete.
    std::vector<std::pair<Via, LeaderProgress>> incomplete_leaders() const;

  private:
    bool root_;
    int world_;
    int local_world_;
    int own_rank_;
    int node_rank_;
    std::vector<Via> owner_;  // root: by rank
    int known_ = 0;
    std::vector<int> local_rank_of_;  // by local rank: the global rank that joined, -1 if none
    int locals_joined_ = 0;
    std::map<Via, LeaderProgress> leaders_;
    std::vector<int> child_nodes_;
    std::vector<char> child_joined_;       // by index into child_nodes_
    std::vector<char> child_complete_;     // by index into child_nodes_
    std::map<Via, std::size_t> child_of_;  // link -> index into child_nodes_
};

}  // namespace sddp
