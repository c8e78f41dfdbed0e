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
// Split by concern: event_loop.hpp holds the epoll set; node.cpp the links, what the loop's
// events mean, and failure handling; join.cpp drives the server side of the handshake;
// collectives.hpp the collectives, which see the tree only through tree_links.hpp. Who may wait
// in the handshake (rendezvous/protocol/admission.hpp) and who has joined
// (rendezvous/protocol/join_accounting.hpp) are pure state machines that the loop only feeds with
// events.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/base/result.hpp"
#include "os/hmac_sha256.hpp"
#include "rendezvous/protocol/admission.hpp"
#include "rendezvous/protocol/join_accounting.hpp"
#include "rendezvous/protocol/wire.hpp"
#include "rendezvous/tcp/collectives.hpp"
#include "rendezvous/tcp/connection.hpp"
#include "rendezvous/tcp/event_loop.hpp"
#include "rendezvous/tcp/fd_limit.hpp"
#include "rendezvous/tcp/socket.hpp"
#include "rendezvous/tcp/tree_links.hpp"
#include "rendezvous/transport.hpp"

namespace sddp::tcp {

class Node final : public Transport, private TreeLinks {
  public:
    // Listens and/or connects, authenticates, and waits until this rank's subtree has joined
    // (the whole world, on rank 0). Bounded by cfg.timeout.
    static Result<std::unique_ptr<Node>> create(const RendezvousConfig& cfg);
    ~Node() override;
    Node(const Node&) = delete;
    Node& operator=(const Node&) = delete;

    int rank() const override { return cfg_.rank; }
    int world_size() const override { return cfg_.world_size; }
    std::string_view name() const override { return "tcp"; }
    Status broadcast(Bytes& bytes, int root) override {
        return collectives_.broadcast(bytes, root);
    }
    Result<std::vector<Bytes>> allgather(std::span<const std::uint8_t> mine) override;
    Result<std::vector<Bytes>> gather(std::span<const std::uint8_t> mine) override;
    Status barrier() override { return collectives_.barrier(); }
    void abort(std::string_view reason) override;

  private:
    enum class Kind { pending, child, parent };

    struct Link {
        std::uint64_t id = 0;
        Connection conn;
        Kind kind = Kind::pending;
        bool via_local = false;  // accepted on (or connected over) the node-local socket
        std::uint32_t events = 0;
        // Handshake (server side).
        wire::Nonce server_nonce{};
        // Identity, once authenticated.
        int rank = -1;
        int local_rank = 0;
        int local_world_size = 1;
        int node_rank = 0;
        std::string host;  // as the peer said, made printable
        std::deque<OwnedFrame> inbox;
        Link(std::uint64_t i, Connection c) : id(i), conn(std::move(c)) {}
    };

    explicit Node(const RendezvousConfig& cfg);

    // --- loop (node.cpp) ---
    Status start_listening();
    Status arm_listeners();  // (re)registers the listeners with epoll, after start or a pause
    Status connect_parent();
    // join_parent's waits for a node leader: its loop runs (its locals' handshakes go on) until
    // the parent's socket `fd` is ready for `events` or `until` passes; the revents, or 0.
    short serve_locals_until(int fd, short events, Clock::time_point until);
    void pump(Clock::time_point until);
    void on_link_event(Link& link, std::uint32_t events);
    bool process_frames(Link& link);  // false once the link is gone or the node failed
    void send_to(Link& link, std::shared_ptr<const Bytes> frame);
    void update_interest(Link& link);
    void remove_link(std::uint64_t id);
    Link* find(std::uint64_t id);
    Error fail(Error e, const Link* from);
    void teardown();
    Status wait_for_output(Clock::time_point deadline, std::string_view during);
    Clock::time_point deadline_from(Clock::time_point start) const override;

    // --- join (join.cpp) ---
    Status run_join();
    void accept_from(bool local);
    void admit(Fd fd, bool local);
    bool on_hello(Link& link, const OwnedFrame& frame);
    // `hello`: the peer's, when it got that far; the reject then carries our proof.
    void refuse(Link& link, const std::string& reason, const wire::Hello* hello = nullptr);
    std::optional<std::string> check_hello(const Link& link, const wire::Hello& h) const;
    // The hello's step tag is this step's and its proof verifies.
    bool proves_step(const Link& link, const wire::Hello& h) const;
    void welcome(Link& link, const wire::Hello& h);  // sends the welcome, seals the link
    void accept_child(Link& link, const wire::Hello& h);
    void on_joined(Link& link, const OwnedFrame& frame);
    void expire_handshakes(Clock::time_point now);
    void report_drop(const std::string& address, const char* why);
    bool join_complete() const;
    std::string describe_join_missing() const;
    void close_listeners();
    // A leader that could not join rank 0 hands its reason to the locals waiting to join it.
    void turn_away_locals(const Error& why, Clock::time_point deadline);
    void tell_why_and_close(Link& link, const wire::Hello& h);

    // --- the tree, as the collectives see it (tree_links.hpp; node.cpp) ---
    const std::string& self() const override { return self_; }
    std::optional<LinkId> parent() const override;
    std::vector<LinkId> children() const override;
    void send(LinkId id, std::shared_ptr<const Bytes> frame) override;
    std::optional<OwnedFrame> receive(LinkId id) override;
    bool closed(LinkId id) const override;
    std::string describe(LinkId id) const override;
    std::vector<int> ranks_behind(LinkId id) const override;
    const std::vector<LinkId>& turn(Clock::time_point until) override;
    Status drain(Clock::time_point deadline, std::string_view during) override {
        return wait_for_output(deadline, during);
    }
    Error fail(Error e, std::optional<LinkId> from = std::nullopt) override;
    const std::optional<Error>& failure() const override { return failed_; }

    // --- naming, for messages (node.cpp) ---
    std::string describe(const Link& link) const;
    std::vector<int> ranks_behind(const Link& link) const;
    void log(const std::string& line) const;

    RendezvousConfig cfg_;
    Collectives collectives_{*this, cfg_.rank, cfg_.world_size};
    HmacKey secret_;   // cfg_.secret, keyed once for every handshake (auth.hpp)
    std::string tag_;  // wire_tag(cfg_): what every handshake's proofs cover
    std::string host_;
    std::string self_;    // "rank 3 (host)": the prefix of every error this rank originates
    std::string master_;  // "addr:port"
    bool is_root_ = false;
    bool serves_locals_ = false;      // root or node leader with local ranks to accept
    bool local_leaf_ = false;         // joins its node leader rather than rank 0
    bool tree_ = false;               // a leader in the leaders' tree (cfg.leaders given)
    int parent_node_ = -1;            // tree: the node whose leader is this leader's parent
    std::vector<int> tree_children_;  // tree: the nodes whose leaders join this one over TCP
    Clock::duration timeout_{};
    Clock::duration margin_{};
    Clock::duration handshake_timeout_{};

    FdLimitRaise fd_limit_;  // before the sockets: restored after they are closed
    EventLoop loop_;
    Fd tcp_listener_;
    Fd local_listener_;
    Fd spare_fd_;  // released to accept-and-close when out of descriptors
    Clock::time_point listeners_paused_until_{};
    bool listeners_paused_ = false;

    std::map<std::uint64_t, std::unique_ptr<Link>> links_;
    std::uint64_t next_id_ = 16;
    Link* parent_ = nullptr;
    short parent_wait_revents_ = 0;  // set by pump for the socket serve_locals_until waits on
    std::vector<Link*> children_;
    std::optional<Admission> admission_;  // once listening
    std::vector<std::uint64_t> touched_;

    std::optional<JoinAccounting> join_;  // root and node leaders, once the join starts

    std::optional<Error> failed_;
    std::optional<Error> turning_away_;  // set while turn_away_locals runs
    int turned_away_ = 0;
    mutable std::size_t refusals_ = 0;
    std::size_t shed_ = 0;
};

}  // namespace sddp::tcp
