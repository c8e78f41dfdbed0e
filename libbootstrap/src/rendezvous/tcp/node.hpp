// SPDX-License-Identifier: Apache-2.0
// One rank's place in the rendezvous tree, and the single-threaded epoll loop that drives it.
//
// Rank 0 is the root. A node leader (local rank 0 of a node) is the parent of its node's other
// ranks over an abstract Unix socket, and over TCP the child of its parent node's leader in the
// leaders' k-ary tree (rendezvous/protocol/leader_tree.hpp; without cfg.leaders, of rank 0
// directly). Without local information (local_world_size == 1) every rank leads its own one-rank
// node. The loop runs only inside calls made by the owning thread: no background thread, no thread
// per peer, every wait bounded.
//
// The node is a composition: the epoll set (event_loop.hpp); the link table, what the loop's
// events mean, and failure handling (here); the join that builds the tree (join.hpp); and the
// collectives (collectives.hpp), which see the tree only through tree_links.hpp.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/base/result.hpp"
#include "rendezvous/tcp/collectives.hpp"
#include "rendezvous/tcp/connection.hpp"
#include "rendezvous/tcp/event_loop.hpp"
#include "rendezvous/tcp/join.hpp"
#include "rendezvous/tcp/links.hpp"
#include "rendezvous/tcp/socket.hpp"
#include "rendezvous/tcp/tree_links.hpp"
#include "rendezvous/transport.hpp"

namespace sddp::tcp {

class Node final : public Transport, private TreeLinks, private JoinLinks {
  public:
    // Listens and/or connects, authenticates, and waits until this rank's subtree has joined
    // (the whole world, on rank 0). Bounded by cfg.timeout.
    static Result<std::unique_ptr<Node>> create(const RendezvousConfig& cfg);
    ~Node() override;
    Node(const Node&) = delete;
    Node& operator=(const Node&) = delete;

    int rank() const override { return place_.cfg.rank; }
    int world_size() const override { return place_.cfg.world_size; }
    std::string_view name() const override { return "tcp"; }
    Status broadcast(Bytes& bytes, int root) override {
        return collectives_.broadcast(bytes, root);
    }
    Result<std::vector<Bytes>> allgather(std::span<const std::uint8_t> mine) override;
    Result<std::vector<Bytes>> gather(std::span<const std::uint8_t> mine) override;
    Status barrier() override { return collectives_.barrier(); }
    void abort(std::string_view reason) override;

  private:
    explicit Node(const RendezvousConfig& cfg);

    // --- the loop's events, links and failure (node.cpp) ---
    void pump(Clock::time_point until) override;
    void on_link_event(Link& link, std::uint32_t events);
    bool process_frames(Link& link) override;  // false once the link is gone or the node failed
    void send_to(Link& link, std::shared_ptr<const Bytes> frame) override;
    void update_interest(Link& link) override;
    Link& add_link(Connection conn) override;
    void remove_link(std::uint64_t id) override;
    Link* find(std::uint64_t id);
    Error fail(Error e, const Link* from) override;
    void teardown();
    Status wait_for_output(Clock::time_point deadline, std::string_view during);
    std::string describe(const Link& link) const override;
    std::vector<int> ranks_behind(const Link& link) const;

    // --- the node, as the join sees it (join.hpp) ---
    EventLoop& loop() override { return loop_; }
    const std::map<std::uint64_t, std::unique_ptr<Link>>& links() const override { return links_; }
    Link* parent_link() const override { return parent_; }
    void set_parent(Link& link) override { parent_ = &link; }
    std::vector<Link*>& child_links() override { return children_; }

    // --- the tree, as the collectives see it (tree_links.hpp) ---
    const std::string& self() const override { return place_.self; }
    std::optional<LinkId> parent() const override;
    std::vector<LinkId> children() const override;
    void send(LinkId id, std::shared_ptr<const Bytes> frame) override;
    std::optional<OwnedFrame> receive(LinkId id) override;
    bool closed(LinkId id) const override;
    std::string describe(LinkId id) const override;
    std::vector<int> ranks_behind(LinkId id) const override;
    const std::vector<LinkId>& turn(Clock::time_point until) override;
    Clock::time_point deadline_from(Clock::time_point start) const override {
        return place_.deadline_from(start);
    }
    Error fail(Error e, std::optional<LinkId> from = std::nullopt) override;

    // --- both ---
    Status drain(Clock::time_point deadline, std::string_view during) override {
        return wait_for_output(deadline, during);
    }
    const std::optional<Error>& failure() const override { return failed_; }

    const Place place_;
    EventLoop loop_;
    std::map<std::uint64_t, std::unique_ptr<Link>> links_;
    std::uint64_t next_id_ = Join::kFirstLinkId;
    Link* parent_ = nullptr;
    std::vector<Link*> children_;
    std::vector<std::uint64_t> touched_;
    FrameDigests digests_;  // a frame fanned out to every child is hashed once
    std::optional<Error> failed_;

    Join join_{place_, *this};
    Collectives collectives_{*this, place_.cfg.rank, place_.cfg.world_size};
};

}  // namespace sddp::tcp
