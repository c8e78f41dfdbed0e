// SPDX-License-Identifier: Apache-2.0
#include "rendezvous/tcp/node.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>

#include "core/base/log.hpp"
#include "core/contract/contract.hpp"
#include "os/host_name.hpp"
#include "rendezvous/protocol/leader_tree.hpp"
#include "rendezvous/tcp/auth.hpp"
#include "rendezvous/tcp/collectives.hpp"
#include "rendezvous/tcp/join_parent.hpp"
#include "rendezvous/tcp/message_text.hpp"
#include "rendezvous/tcp_transport.hpp"

namespace sddp::tcp {
namespace {

constexpr std::uint64_t kTcpListenerId = 1;
constexpr std::uint64_t kLocalListenerId = 2;
constexpr std::uint64_t kParentWaitId = 3;  // the parent's socket while connect_parent waits

std::string hostname_or(const std::string& configured) {
    if (!configured.empty()) return configured;
    return local_host_name().value_or("unknown-host");
}

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

Node::Node(const RendezvousConfig& cfg)
    : cfg_(cfg), secret_(std::string_view(cfg.secret)), tag_(wire_tag(cfg)) {
    host_ = hostname_or(cfg.host);
    self_ = "rank " + std::to_string(cfg.rank) + " (" + host_ + ")";
    master_ = cfg.master_addr + ":" + std::to_string(cfg.master_port);
    is_root_ = cfg.rank == 0;
    const bool two_level = cfg.local_world_size > 1;
    serves_locals_ = two_level && cfg.local_rank == 0;
    local_leaf_ = two_level && cfg.local_rank > 0;
    tree_ = !cfg.leaders.empty() && !local_leaf_;
    if (tree_) {
        const int nodes = static_cast<int>(cfg.leaders.size());
        parent_node_ = tree_parent(cfg.node_rank, cfg.tree_fanout);
        tree_children_ = tree_children(cfg.node_rank, nodes, cfg.tree_fanout);
    }
    timeout_ = cfg.timeout;
    // Servers give up a little before their children so that their diagnosis (which ranks are
    // missing) reaches everyone before the children's own, vaguer, timeouts fire.
    margin_ = std::min<Clock::duration>(std::chrono::seconds(1), timeout_ / 10);
    handshake_timeout_ = std::clamp<Clock::duration>(timeout_ / 2, std::chrono::milliseconds(200),
                                                     std::chrono::seconds(5));
}

Result<std::unique_ptr<Node>> Node::create(const RendezvousConfig& cfg) {
    SDDP_CHECK(validate(cfg));
    std::unique_ptr<Node> node(new Node(cfg));
    const Status joined = node->run_join();
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
    fail(make_error(Errc::peer_lost, self_ + " aborted the rendezvous: " + std::string(reason)));
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

Clock::time_point Node::deadline_from(Clock::time_point start) const {
    if (is_root_) return start + timeout_ - margin_;
    if (serves_locals_ || !tree_children_.empty()) return start + timeout_ - margin_ / 2;
    return start + timeout_;
}

Status Node::start_listening() {
    SDDP_CHECK(loop_.open());
    const bool need_tcp =
        tree_ ? !tree_children_.empty()
              : is_root_ && cfg_.world_size > (serves_locals_ ? cfg_.local_world_size : 1);
    // Listening comes first: every peer of this rank retries until it does, so nothing else
    // (the descriptor limit below reads /proc/self/fd) may stand before it.
    if (serves_locals_) {
        SDDP_TRY(fd, listen_abstract(local_socket_name(cfg_)));
        local_listener_ = std::move(fd);
    }
    // A tree leader listens on its own node, where the port may be busy though rank 0's was
    // free: the error names this node, and the local listener stays up so that run_join can
    // tell the node's other ranks why at once.
    std::optional<Error> tcp_failed;
    if (need_tcp) {
        const std::string who =
            is_root_ ? std::string("rank 0")
                     : "node " + host_ + " (leader of node " + std::to_string(cfg_.node_rank) +
                           " in the rendezvous tree, rank " + std::to_string(cfg_.rank) + ")";
        Result<Fd> fd = listen_tcp(
            tree_ ? cfg_.leaders[static_cast<std::size_t>(cfg_.node_rank)].port : cfg_.master_port,
            who);
        if (fd.ok()) {
            tcp_listener_ = std::move(*fd);
        } else {
            tcp_failed = fd.error();
        }
    }
    const bool serves = tcp_listener_.valid() || local_listener_.valid();
    if (serves) {
        // The root holds a socket per node leader, a leader one per local rank, and a few
        // pending handshakes; the soft limit is raised that far only, and restored when the node
        // goes. A rank that only connects holds two descriptors and raises nothing.
        const std::uint64_t links =
            tree_ ? tree_children_.size() + static_cast<std::uint64_t>(cfg_.local_world_size) + 1
            : is_root_ ? cfg_.world_size
                       : cfg_.local_world_size;
        fd_limit_ = FdLimitRaise(links + 320);
    }
    admission_.emplace(
        static_cast<std::size_t>(std::clamp<std::uint64_t>(fd_limit_.soft() / 4, 16, 4096)),
        handshake_timeout_);
    SDDP_CHECK(arm_listeners());
    if (serves) spare_fd_ = Fd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    if (tcp_failed) return *tcp_failed;
    return ok_status();
}

Status Node::arm_listeners() {
    Status armed = ok_status();
    for (auto [fd, id] : {std::pair{tcp_listener_.get(), kTcpListenerId},
                          std::pair{local_listener_.get(), kLocalListenerId}}) {
        if (fd < 0) continue;
        if (!loop_.add(fd, EPOLLIN, id) && armed.ok()) {
            armed = make_error(Errc::io, "epoll_ctl: " + errno_text(errno));
        }
    }
    return armed;
}

Status Node::connect_parent() {
    if (is_root_) return ok_status();
    ParentTarget target;
    if (local_leaf_) {
        target.local = true;
        target.local_name = local_socket_name(cfg_);
        target.description = "the node leader (local rank 0 of node " +
                             std::to_string(cfg_.node_rank) + " on " + host_ + ")";
    } else if (tree_ && parent_node_ > 0) {
        const auto& up = cfg_.leaders[static_cast<std::size_t>(parent_node_)];
        target.host = up.host;
        target.port = up.port;
        target.description = "the node leader of node " + std::to_string(parent_node_) + " at " +
                             up.host + ":" + std::to_string(up.port);
        target.pace_index =
            static_cast<std::uint32_t>(tree_sibling_index(cfg_.node_rank, cfg_.tree_fanout));
    } else {
        target.host = cfg_.master_addr;
        target.port = cfg_.master_port;
        target.description = "rank 0 at " + master_;
        // In the tree rank 0 admits only its k children: pace by position among them.
        target.pace_index =
            static_cast<std::uint32_t>(tree_ ? tree_sibling_index(cfg_.node_rank, cfg_.tree_fanout)
                                             : std::max(cfg_.node_rank, 0));
    }
    JoinWait wait;
    // A leader of a node (and of no child nodes) serves its locals while it joins: their
    // handshakes overlap its own instead of waiting in the backlog behind it. A tree leader
    // would also admit child leaders, whose reports need parent_ to pass on: it waits plainly.
    const bool overlap = serves_locals_ && !tcp_listener_.valid();
    if (overlap) {
        wait.idle = [this](int fd, short events, Clock::time_point until) {
            return serve_locals_until(fd, events, until);
        };
        wait.stopped = [this] { return failed_.has_value(); };
    }
    Result<ParentLink> link =
        join_parent(target, cfg_, secret_, host_, deadline_from(Clock::now()), wait);
    if (failed_) return *failed_;
    if (!link.ok()) return link.error();
    const std::uint64_t id = next_id_++;
    auto owned = std::make_unique<Link>(id, std::move(*link->conn));
    Link& l = *owned;
    l.kind = Kind::parent;
    l.via_local = target.local;
    l.rank = link->rank;
    l.host = link->host;
    links_.emplace(id, std::move(owned));
    parent_ = &l;
    update_interest(l);
    // The locals welcomed while this rank was joining could not be reported yet (accept_child
    // reports each at once from now on).
    wire::Joined early;
    for (const Link* c : children_) {
        if (c->via_local) early.ranks.push_back(c->rank);
    }
    if (!early.ranks.empty()) send_to(l, std::make_shared<const Bytes>(wire::encode_joined(early)));
    // The parent may already have sent more than the welcome (a broadcast right after the
    // join): those bytes sit in the buffer and no epoll event will announce them again.
    process_frames(l);
    if (failed_) return *failed_;
    return ok_status();
}

short Node::serve_locals_until(int fd, short events, Clock::time_point until) {
    if (!loop_.valid()) return 0;
    parent_wait_revents_ = 0;
    bool watched = false;
    if (fd >= 0) {
        watched = loop_.add(fd, (events & POLLOUT) ? EPOLLOUT : EPOLLIN, kParentWaitId);
        if (!watched) {
            // Not watchable (cannot happen for a socket): fall back to a plain wait on it.
            pollfd p{fd, events, 0};
            return ::poll(&p, 1, poll_timeout_ms(until)) > 0 ? p.revents : short{0};
        }
    }
    while (parent_wait_revents_ == 0 && !failed_ && Clock::now() < until) pump(until);
    if (watched) loop_.remove(fd);
    return parent_wait_revents_;
}

Node::Link* Node::find(std::uint64_t id) {
    const auto it = links_.find(id);
    return it == links_.end() ? nullptr : it->second.get();
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
    if (link->kind == Kind::pending && admission_) admission_->leave(id);
    links_.erase(id);
}

void Node::send_to(Link& link, std::shared_ptr<const Bytes> frame) {
    link.conn.send(std::move(frame));
    link.conn.flush();
    update_interest(link);
}

void Node::pump(Clock::time_point until) {
    touched_.clear();
    auto wake = until;
    if (admission_) wake = std::min(wake, admission_->next_deadline());
    if (listeners_paused_) wake = std::min(wake, listeners_paused_until_);
    EventLoop::Ready room[EventLoop::kMaxReady];
    for (const EventLoop::Ready& ready : loop_.wait(wake, room)) {
        if (failed_) break;
        const std::uint64_t id = ready.id;
        if (id == kTcpListenerId || id == kLocalListenerId) {
            accept_from(id == kLocalListenerId);
            continue;
        }
        if (id == kParentWaitId) {
            const std::uint32_t e = ready.events;
            parent_wait_revents_ =
                static_cast<short>(((e & EPOLLIN) ? POLLIN : 0) | ((e & EPOLLOUT) ? POLLOUT : 0) |
                                   ((e & EPOLLERR) ? POLLERR : 0) | ((e & EPOLLHUP) ? POLLHUP : 0));
            continue;
        }
        if (Link* link = find(id)) on_link_event(*link, ready.events);
    }
    if (failed_) return;
    const auto now = Clock::now();
    if (admission_ && now >= admission_->next_deadline()) expire_handshakes(now);
    if (listeners_paused_ && now >= listeners_paused_until_) {
        listeners_paused_ = false;
        // Best effort: a listener that cannot be re-armed leaves its peers to time out, named.
        (void)arm_listeners();
    }
}

void Node::on_link_event(Link& link, std::uint32_t events) {
    const std::uint64_t id = link.id;
    if (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
        const std::size_t cap = link.kind == Kind::pending
                                    ? wire::kHeaderSize + wire::kMaxHandshakePayload
                                    : wire::kHeaderSize + wire::max_frame_payload(cfg_.world_size);
        link.conn.read_available(cap);
    }
    if (events & (EPOLLOUT | EPOLLERR)) link.conn.flush();
    touched_.push_back(id);
    if (!process_frames(link)) return;
    if (link.kind == Kind::pending && (link.conn.eof() || link.conn.broken())) {
        remove_link(id);  // a port scanner, or a client that gave up: nothing to report
        return;
    }
    if (link.conn.broken()) {
        // We still had bytes for this peer and it is gone: it never got them.
        fail(make_error(Errc::peer_lost, self_ + ": lost connection to " + describe(link) +
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
        const bool pending = link.kind == Kind::pending;
        Result<std::optional<OwnedFrame>> next = link.conn.next_frame(
            pending ? wire::kMaxHandshakePayload : wire::max_frame_payload(cfg_.world_size));
        if (!next.ok()) {
            if (pending) {
                refuse(link, next.error().message);
            } else {
                fail(make_error(Errc::protocol,
                                self_ + ": " + describe(link) +
                                    " sent an invalid message: " + next.error().message),
                     &link);
            }
            return false;
        }
        if (!*next) return true;
        const OwnedFrame& frame = **next;
        if (pending) {
            if (frame.type != wire::MsgType::hello) {
                refuse(link, "expected a hello message first");
                return false;
            }
            if (!on_hello(link, frame)) return false;
            continue;
        }
        switch (frame.type) {
            case wire::MsgType::abort: {
                Result<wire::Abort> a = wire::decode_abort(frame.payload());
                Error e = a.ok() ? make_error(static_cast<Errc>(a->code),
                                              wire::printable(a->reason, wire::kMaxReasonSize))
                                 : make_error(Errc::peer_lost, self_ + ": " + describe(link) +
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
                if (!join_ || link.kind != Kind::child || (!is_root_ && !tree_)) break;
                on_joined(link, frame);
                if (failed_) return false;
                continue;
            case wire::MsgType::up:
                if (link.kind != Kind::child) break;
                link.inbox.push_back(frame);
                continue;
            case wire::MsgType::down:
                if (link.kind != Kind::parent) break;
                link.inbox.push_back(frame);
                continue;
            default:
                break;
        }
        fail(make_error(Errc::protocol, self_ + ": " + describe(link) +
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
        if (link.get() == from || link->kind == Kind::pending || link->conn.broken()) continue;
        link->conn.send(abort_frame);
        link->conn.flush();
        targets.push_back(link.get());
    }
    const auto until = Clock::now() + std::min<Clock::duration>(std::chrono::milliseconds(500),
                                                                handshake_timeout_);
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
    close_listeners();
    for (auto& [id, link] : links_) {
        // Half-close first: a peer still reading gets EOF after our last bytes, not a reset.
        link->conn.shutdown_write();
    }
    links_.clear();
    children_.clear();
    admission_.reset();
    parent_ = nullptr;
    loop_.close();
}

Status Node::wait_for_output(Clock::time_point deadline, std::string_view during) {
    while (loop_.writers() > 0 && !failed_) {
        if (Clock::now() >= deadline) {
            std::vector<int> slow;
            for (auto& [id, link] : links_) {
                if (link->kind != Kind::pending && link->conn.want_write())
                    slow.push_back(link->rank);
            }
            return fail(make_error(Errc::timeout, self_ + ": timed out in " + std::string(during) +
                                                      " sending to ranks " +
                                                      format_rank_list(slow) +
                                                      ", which stopped reading"));
        }
        pump(deadline);
    }
    if (failed_) return *failed_;
    return ok_status();
}

std::vector<int> Node::ranks_behind(const Link& link) const {
    std::vector<int> out;
    if (link.rank >= 0) out.push_back(link.rank);
    if ((is_root_ || tree_) && join_ && link.kind == Kind::child &&
        (link.local_world_size > 1 || tree_) && !link.via_local) {
        return join_->ranks_via(link.id);
    }
    return out;
}

std::string Node::describe(const Link& link) const {
    if (link.kind == Kind::pending) return "an unauthenticated peer at " + link.conn.addr();
    if (link.kind == Kind::parent) {
        if (link.rank == 0) {
            return std::string("rank 0 at ") + master_ +
                   (link.host.empty() ? "" : " (" + link.host + ")");
        }
        const int node = local_leaf_ ? cfg_.node_rank : parent_node_;
        return "rank " + std::to_string(link.rank) + " (" + link.host + ", node leader of node " +
               std::to_string(node) + ")";
    }
    std::string s = "rank " + std::to_string(link.rank) + " (" + link.host;
    if (tree_ && !link.via_local) {
        s += ", node leader of node " + std::to_string(link.node_rank) + " for ranks " +
             format_rank_list(ranks_behind(link));
    } else if (is_root_ && !link.via_local && link.local_world_size > 1) {
        s += ", node leader for ranks " + format_rank_list(ranks_behind(link));
    }
    return s + ")";
}

void Node::log(const std::string& line) const {
    sddp::log(LogLevel::warn, "rendezvous: " + line);
}

}  // namespace sddp::tcp

namespace sddp {

Result<std::unique_ptr<Transport>> make_tcp_transport(const RendezvousConfig& cfg) {
    SDDP_TRY(node, tcp::Node::create(cfg));
    return std::unique_ptr<Transport>(std::move(node));
}

}  // namespace sddp
