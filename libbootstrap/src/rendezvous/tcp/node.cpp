// SPDX-License-Identifier: Apache-2.0
#include "rendezvous/tcp/node.hpp"

#include <poll.h>
#include <sys/epoll.h>

#include <algorithm>
#include <cstdint>

#include "core/contract/contract.hpp"
#include "rendezvous/protocol/leader_tree.hpp"
#include "rendezvous/tcp/message_text.hpp"
#include "rendezvous/tcp_transport.hpp"

namespace sddp::tcp {
namespace {

Status validate(const RendezvousConfig& c) {
    auto bad = [](std::string m) { return Status(make_error(Errc::invalid_input, std::move(m))); };
    if (c.world_size < 1)
        return bad("rendezvous: world size " + std::to_string(c.world_size) +
                   " must be at least 1");
    if (c.rank < 0 || c.rank >= c.world_size) {
        return bad("rendezvous: rank " + std::to_string(c.rank) + " is outside world size " +
                   std::to_string(c.world_size));
    }
    if (c.local_world_size < 1 || c.local_world_size > c.world_size || c.local_rank < 0 ||
        c.local_rank >= c.local_world_size) {
        return bad("rendezvous: local rank " + std::to_string(c.local_rank) +
                   " / local world size " + std::to_string(c.local_world_size) +
                   " are inconsistent (world size " + std::to_string(c.world_size) + ")");
    }
    if (c.rank == 0 && c.local_rank != 0) {
        return bad("rendezvous: rank 0 must be local rank 0 of its node (it is " +
                   std::to_string(c.local_rank) + "); Slurm numbers local ranks in global order");
    }
    if (c.world_size > 1 && c.master_port == 0) {
        return bad("rendezvous: no master port; set --ddp=port=N or MASTER_PORT");
    }
    if (c.world_size > 1 && c.rank != 0 && c.master_addr.empty() &&
        !(c.local_world_size > 1 && c.local_rank > 0)) {
        return bad("rendezvous: no master address (MASTER_ADDR) for rank " +
                   std::to_string(c.rank));
    }
    if (c.timeout.count() <= 0) return bad("rendezvous: the timeout must be positive");
    if (!c.leaders.empty()) {
        if (c.tree_fanout < kMinTreeFanout || c.tree_fanout > kMaxTreeFanout) {
            return bad("rendezvous: tree fanout " + std::to_string(c.tree_fanout) + " is outside " +
                       std::to_string(kMinTreeFanout) + ".." + std::to_string(kMaxTreeFanout) +
                       " (" + contract::kTreeFanoutVar + ")");
        }
        if (c.node_rank < 0 || static_cast<std::size_t>(c.node_rank) >= c.leaders.size()) {
            return bad("rendezvous: node rank " + std::to_string(c.node_rank) + " is outside the " +
                       std::to_string(c.leaders.size()) + " nodes of the leaders' tree");
        }
        if (c.rank == 0 && c.node_rank != 0) {
            return bad("rendezvous: rank 0 is on node " + std::to_string(c.node_rank) +
                       ", but the leaders' tree is rooted at node 0");
        }
        for (std::size_t n = 0; n < c.leaders.size(); ++n) {
            if (c.leaders[n].port == 0 || c.leaders[n].host.empty()) {
                return bad("rendezvous: no address for the leader of node " + std::to_string(n));
            }
        }
    }
    if (c.world_size > 1 && c.secret.empty() && !c.allow_unauthenticated) {
        return bad("rendezvous: no step secret (" + std::string(contract::kSecretVar) +
                   ") and unauthenticated TCP was not allowed");
    }
    return ok_status();
}

}  // namespace

Node::Node(const RendezvousConfig& cfg) : place_(cfg) {}

Result<std::unique_ptr<Node>> Node::create(const RendezvousConfig& cfg) {
    SDDP_CHECK(validate(cfg));
    std::unique_ptr<Node> node(new Node(cfg));
    const Status joined = node->join_.run();
    if (!joined.ok()) {
        node->teardown();
        return joined.error();
    }
    return node;
}

Node::~Node() {
    teardown();
}

Result<std::vector<Bytes>> Node::allgather(std::span<const std::uint8_t> mine) {
    return collectives_.allgather(mine);
}

Result<std::vector<Bytes>> Node::gather(std::span<const std::uint8_t> mine) {
    return collectives_.gather(mine);
}

void Node::abort(std::string_view reason) {
    if (failed_) return;
    fail(make_error(Errc::peer_lost,
                    place_.self + " aborted the rendezvous: " + std::string(reason)));
}

std::optional<TreeLinks::LinkId> Node::parent() const {
    if (parent_ == nullptr) return std::nullopt;
    return parent_->id;
}

std::vector<TreeLinks::LinkId> Node::children() const {
    std::vector<LinkId> ids;
    ids.reserve(children_.size());
    for (const Link* c : children_) ids.push_back(c->id);
    return ids;
}

void Node::send(LinkId id, std::shared_ptr<const Bytes> frame) {
    if (Link* link = find(id)) send_to(*link, std::move(frame));
}

std::optional<OwnedFrame> Node::receive(LinkId id) {
    Link* link = find(id);
    if (link == nullptr || link->inbox.empty()) return std::nullopt;
    OwnedFrame f = std::move(link->inbox.front());
    link->inbox.pop_front();
    return f;
}

bool Node::closed(LinkId id) const {
    const auto it = links_.find(id);
    return it == links_.end() || it->second->conn.eof();
}

std::string Node::describe(LinkId id) const {
    const auto it = links_.find(id);
    return it == links_.end() ? "a closed link" : describe(*it->second);
}

std::vector<int> Node::ranks_behind(LinkId id) const {
    const auto it = links_.find(id);
    return it == links_.end() ? std::vector<int>{} : ranks_behind(*it->second);
}

const std::vector<TreeLinks::LinkId>& Node::turn(Clock::time_point until) {
    pump(until);
    return touched_;
}

Error Node::fail(Error e, std::optional<LinkId> from) {
    return fail(std::move(e), from ? find(*from) : nullptr);
}

Link* Node::find(std::uint64_t id) {
    const auto it = links_.find(id);
    return it == links_.end() ? nullptr : it->second.get();
}

Link& Node::add_link(Connection conn) {
    const std::uint64_t id = next_id_++;
    auto owned = std::make_unique<Link>(id, std::move(conn));
    Link& link = *owned;
    links_.emplace(id, std::move(owned));
    return link;
}

void Node::update_interest(Link& link) {
    std::uint32_t want = 0;
    if (link.conn.fd() >= 0) {
        if (!link.conn.eof()) want |= EPOLLIN;
        if (link.conn.want_write()) want |= EPOLLOUT;
    }
    loop_.watch(link.conn.fd(), link.id, link.events, want);
}

void Node::remove_link(std::uint64_t id) {
    Link* link = find(id);
    if (link == nullptr) return;
    loop_.unwatch(link->conn.fd(), link->events);
    if (link == parent_) parent_ = nullptr;
    std::erase(children_, link);
    if (link->kind == LinkKind::pending) join_.forget(id);
    links_.erase(id);
}

void Node::send_to(Link& link, std::shared_ptr<const Bytes> frame) {
    link.conn.send(std::move(frame), &digests_);
    link.conn.flush();
    update_interest(link);
}

void Node::pump(Clock::time_point until) {
    touched_.clear();
    EventLoop::Ready room[EventLoop::kMaxReady];
    for (const EventLoop::Ready& ready : loop_.wait(join_.wake(until), room)) {
        if (failed_) break;
        const std::uint64_t id = ready.id;
        if (join_.owns(id)) {
            join_.on_event(id, ready.events);
            continue;
        }
        if (Link* link = find(id)) on_link_event(*link, ready.events);
    }
    if (failed_) return;
    join_.on_tick(Clock::now());
}

void Node::on_link_event(Link& link, std::uint32_t events) {
    const std::uint64_t id = link.id;
    if (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
        const std::size_t cap =
            link.kind == LinkKind::pending
                ? wire::kHeaderSize + wire::kMaxHandshakePayload
                : wire::kHeaderSize + wire::max_frame_payload(place_.cfg.world_size);
        link.conn.read_available(cap);
    }
    if (events & (EPOLLOUT | EPOLLERR)) link.conn.flush();
    touched_.push_back(id);
    if (!process_frames(link)) return;
    if (link.kind == LinkKind::pending && (link.conn.eof() || link.conn.broken())) {
        remove_link(id);  // a port scanner, or a client that gave up: nothing to report
        return;
    }
    if (link.conn.broken()) {
        // We still had bytes for this peer and it is gone: it never got them.
        fail(make_error(Errc::peer_lost, place_.self + ": lost connection to " + describe(link) +
                                             " while sending to it (" +
                                             errno_text(link.conn.last_errno()) +
                                             "); it exited or was killed, see its log"),
             &link);
        return;
    }
    update_interest(link);
}

bool Node::process_frames(Link& link) {
    while (!failed_) {
        const bool pending = link.kind == LinkKind::pending;
        Result<std::optional<OwnedFrame>> next = link.conn.next_frame(
            pending ? wire::kMaxHandshakePayload : wire::max_frame_payload(place_.cfg.world_size));
        if (!next.ok()) {
            if (pending) {
                join_.refuse(link, next.error().message);
            } else {
                fail(make_error(Errc::protocol,
                                place_.self + ": " + describe(link) +
                                    " sent an invalid message: " + next.error().message),
                     &link);
            }
            return false;
        }
        if (!*next) return true;
        const OwnedFrame& frame = **next;
        if (pending) {
            if (frame.type != wire::MsgType::hello) {
                join_.refuse(link, "expected a hello message first");
                return false;
            }
            if (!join_.on_hello(link, frame)) return false;
            continue;
        }
        switch (frame.type) {
            case wire::MsgType::abort: {
                Result<wire::Abort> a = wire::decode_abort(frame.payload());
                Error e = a.ok() ? make_error(static_cast<Errc>(a->code),
                                              wire::printable(a->reason, wire::kMaxReasonSize))
                                 : make_error(Errc::peer_lost, place_.self + ": " + describe(link) +
                                                                   " aborted the rendezvous");
                const auto code = static_cast<std::uint32_t>(e.code);
                if (code < static_cast<std::uint32_t>(Errc::invalid_input) ||
                    code > static_cast<std::uint32_t>(Errc::internal)) {
                    e.code = Errc::peer_lost;
                }
                fail(std::move(e), &link);
                return false;
            }
            case wire::MsgType::joined:
                if (!join_.takes_joined(link)) break;
                join_.on_joined(link, frame);
                if (failed_) return false;
                continue;
            case wire::MsgType::up:
                if (link.kind != LinkKind::child) break;
                link.inbox.push_back(frame);
                continue;
            case wire::MsgType::down:
                if (link.kind != LinkKind::parent) break;
                link.inbox.push_back(frame);
                continue;
            default:
                break;
        }
        fail(make_error(Errc::protocol, place_.self + ": " + describe(link) +
                                            " sent a message out of place (type " +
                                            std::to_string(static_cast<int>(frame.type)) + ")"),
             &link);
        return false;
    }
    return false;
}

Error Node::fail(Error e, const Link* from) {
    if (failed_) return *failed_;
    failed_ = e;
    if (!loop_.valid()) return e;
    // Tell every peer but the one the news came from, then give the bytes a bounded moment to
    // leave: abort is best effort and must not hang on a peer that stopped reading.
    const auto abort_frame = std::make_shared<const Bytes>(
        wire::encode_abort(wire::Abort{static_cast<std::uint32_t>(e.code), e.message}));
    std::vector<Link*> targets;
    for (auto& [id, link] : links_) {
        if (link.get() == from || link->kind == LinkKind::pending || link->conn.broken()) continue;
        link->conn.send(abort_frame, &digests_);
        link->conn.flush();
        targets.push_back(link.get());
    }
    const auto until = Clock::now() + std::min<Clock::duration>(std::chrono::milliseconds(500),
                                                                place_.handshake_timeout);
    for (;;) {
        std::vector<pollfd> fds;
        for (Link* l : targets) {
            if (l->conn.want_write()) fds.push_back(pollfd{l->conn.fd(), POLLOUT, 0});
        }
        if (fds.empty() || Clock::now() >= until) break;
        if (::poll(fds.data(), fds.size(), poll_timeout_ms(until)) <= 0) break;
        for (Link* l : targets) l->conn.flush();
    }
    for (Link* l : targets) l->conn.shutdown_write();
    return e;
}

void Node::teardown() {
    join_.close_listeners();
    for (auto& [id, link] : links_) {
        // Half-close first: a peer still reading gets EOF after our last bytes, not a reset.
        link->conn.shutdown_write();
    }
    links_.clear();
    children_.clear();
    join_.stop_admitting();
    parent_ = nullptr;
    loop_.close();
}

Status Node::wait_for_output(Clock::time_point deadline, std::string_view during) {
    while (loop_.writers() > 0 && !failed_) {
        if (Clock::now() >= deadline) {
            std::vector<int> slow;
            for (auto& [id, link] : links_) {
                if (link->kind != LinkKind::pending && link->conn.want_write())
                    slow.push_back(link->rank);
            }
            return fail(make_error(Errc::timeout, place_.self + ": timed out in " +
                                                      std::string(during) + " sending to ranks " +
                                                      format_rank_list(slow) +
                                                      ", which stopped reading"));
        }
        pump(deadline);
    }
    if (failed_) return *failed_;
    return ok_status();
}

std::vector<int> Node::ranks_behind(const Link& link) const {
    return join_.ranks_behind(link);
}

std::string Node::describe(const Link& link) const {
    if (link.kind == LinkKind::pending) return "an unauthenticated peer at " + link.conn.addr();
    if (link.kind == LinkKind::parent) {
        if (link.rank == 0) {
            return std::string("rank 0 at ") + place_.master +
                   (link.host.empty() ? "" : " (" + link.host + ")");
        }
        const int node = place_.local_leaf ? place_.cfg.node_rank : place_.parent_node;
        return "rank " + std::to_string(link.rank) + " (" + link.host + ", node leader of node " +
               std::to_string(node) + ")";
    }
    std::string s = "rank " + std::to_string(link.rank) + " (" + link.host;
    if (place_.tree && !link.via_local) {
        s += ", node leader of node " + std::to_string(link.node_rank) + " for ranks " +
             format_rank_list(ranks_behind(link));
    } else if (place_.is_root && !link.via_local && link.local_world_size > 1) {
        s += ", node leader for ranks " + format_rank_list(ranks_behind(link));
    }
    return s + ")";
}

}  // namespace sddp::tcp

namespace sddp {

Result<std::unique_ptr<Transport>> make_tcp_transport(const RendezvousConfig& cfg) {
    SDDP_TRY(node, tcp::Node::create(cfg));
    return std::unique_ptr<Transport>(std::move(node));
}

}  // namespace sddp
