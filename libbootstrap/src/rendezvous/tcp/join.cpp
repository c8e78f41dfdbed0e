// SPDX-License-Identifier: Apache-2.0
// The join (join.hpp): listening, connecting to the parent, the server side of the handshake, and
// counting who has joined.
#include "rendezvous/tcp/join.hpp"

#include <poll.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <fcntl.h>
#include <algorithm>
#include <cerrno>
#include <cstdint>

#include "core/base/log.hpp"
#include "core/contract/contract.hpp"
#include "os/hmac_sha256.hpp"
#include "rendezvous/protocol/leader_tree.hpp"
#include "rendezvous/tcp/auth.hpp"
#include "rendezvous/tcp/join_parent.hpp"
#include "rendezvous/tcp/message_text.hpp"

namespace sddp::tcp {
namespace {

constexpr std::uint64_t kTcpListenerId = 1;
constexpr std::uint64_t kLocalListenerId = 2;
constexpr std::uint64_t kParentWaitId = 3;  // the parent's socket while connect_parent waits
static_assert(kParentWaitId < Join::kFirstLinkId);

constexpr std::size_t kRefusalsLoggedInFull = 10;

// "127.0.0.2" from "127.0.0.2:41234" (or "[::1]" from "[::1]:41234"): admission counts hosts,
// not connections.
std::string host_part(const std::string& addr) {
    const auto colon = addr.rfind(':');
    return colon == std::string::npos ? addr : addr.substr(0, colon);
}

}  // namespace

Join::Join(const Place& place, JoinLinks& node)
    : place_(place),
      node_(node),
      secret_(std::string_view(place.cfg.secret)),
      tag_(wire_tag(place.cfg)) {}

void Join::on_event(std::uint64_t id, std::uint32_t events) {
    if (id == kTcpListenerId || id == kLocalListenerId) {
        accept_from(id == kLocalListenerId);
        return;
    }
    if (id == kParentWaitId) {
        parent_wait_revents_ = static_cast<short>(
            ((events & EPOLLIN) ? POLLIN : 0) | ((events & EPOLLOUT) ? POLLOUT : 0) |
            ((events & EPOLLERR) ? POLLERR : 0) | ((events & EPOLLHUP) ? POLLHUP : 0));
    }
}

Clock::time_point Join::wake(Clock::time_point until) const {
    auto wake = until;
    if (admission_) wake = std::min(wake, admission_->next_deadline());
    if (listeners_paused_) wake = std::min(wake, listeners_paused_until_);
    return wake;
}

void Join::on_tick(Clock::time_point now) {
    if (admission_ && now >= admission_->next_deadline()) expire_handshakes(now);
    if (listeners_paused_ && now >= listeners_paused_until_) {
        listeners_paused_ = false;
        // Best effort: a listener that cannot be re-armed leaves its peers to time out, named.
        (void)arm_listeners();
    }
}

void Join::forget(std::uint64_t id) {
    if (admission_) admission_->leave(id);
}

bool Join::takes_joined(const Link& link) const {
    return join_ && link.kind == LinkKind::child && (place_.is_root || place_.tree);
}

std::vector<int> Join::ranks_behind(const Link& link) const {
    std::vector<int> out;
    if (link.rank >= 0) out.push_back(link.rank);
    if ((place_.is_root || place_.tree) && join_ && link.kind == LinkKind::child &&
        (link.local_world_size > 1 || place_.tree) && !link.via_local) {
        return join_->ranks_via(link.id);
    }
    return out;
}

void Join::log(const std::string& line) const {
    sddp::log(LogLevel::warn, "rendezvous: " + line);
}

Status Join::run() {
    const auto start = Clock::now();
    const auto deadline = place_.deadline_from(start);
    if (place_.cfg.world_size == 1) return ok_status();
    if (Status listening = start_listening(); !listening.ok()) {
        if (place_.serves_locals) turn_away_locals(listening.error(), deadline);
        return listening;
    }
    if (place_.is_root || place_.serves_locals || !place_.tree_children.empty()) {
        join_.emplace(place_.is_root, place_.cfg.world_size,
                      place_.serves_locals ? place_.cfg.local_world_size : 1, place_.cfg.rank,
                      place_.cfg.node_rank, place_.tree_children);
    }
    // A node leader reaches its parent before serving its locals and child leaders; they wait in
    // the listen backlog.
    if (Status up = connect_parent(); !up.ok()) {
        if (place_.serves_locals) turn_away_locals(up.error(), deadline);
        return up;
    }
    while (!join_complete()) {
        if (node_.failure()) return *node_.failure();
        if (node_.parent_link() != nullptr && node_.parent_link()->conn.eof()) {
            return node_.fail(
                make_error(Errc::peer_lost, place_.self + ": lost connection to " +
                                                node_.describe(*node_.parent_link()) +
                                                " while ranks were joining; it exited or "
                                                "was killed, see its log"),
                node_.parent_link());
        }
        for (Link* c : node_.child_links()) {
            if (c->conn.eof()) {
                return node_.fail(
                    make_error(Errc::peer_lost, place_.self + ": lost connection to " +
                                                    node_.describe(*c) +
                                                    " while ranks were joining; it exited "
                                                    "or was killed, see its log"),
                    c);
            }
        }
        if (Clock::now() >= deadline) {
            return node_.fail(make_error(Errc::timeout, place_.self + ": timed out after " +
                                                            seconds_text(Clock::now() - start) +
                                                            " " + describe_join_missing()),
                              nullptr);
        }
        node_.pump(deadline);
        report_joined();
    }
    if (node_.failure()) return *node_.failure();
    if (place_.tree && node_.parent_link() != nullptr) {
        // The whole subtree is in and every rank of it was reported: say so, so the parent's
        // join (and rank 0's) completes exactly when everyone below has joined.
        node_.send_to(*node_.parent_link(),
                      std::make_shared<const Bytes>(wire::encode_joined(wire::Joined{})));
        sddp::log(LogLevel::info,
                  "rendezvous: " + place_.self + ": node " + std::to_string(place_.cfg.node_rank) +
                      "'s leader joined node " + std::to_string(place_.parent_node) +
                      "'s leader (tree fanout " + std::to_string(place_.cfg.tree_fanout) +
                      ", depth " +
                      std::to_string(tree_depth(static_cast<int>(place_.cfg.leaders.size()),
                                                place_.cfg.tree_fanout)) +
                      ") with " + std::to_string(place_.tree_children.size()) + " child node(s)");
    }
    // Everyone is here: stop accepting, so late strangers get a refused connection.
    close_listeners();
    std::vector<std::uint64_t> stale;
    for (const auto& [id, link] : node_.links()) {
        if (link->kind == LinkKind::pending) stale.push_back(id);
    }
    for (const std::uint64_t id : stale) node_.remove_link(id);
    return node_.drain(deadline, "the join");
}

Status Join::start_listening() {
    SDDP_CHECK(node_.loop().open());
    const bool need_tcp =
        place_.tree
            ? !place_.tree_children.empty()
            : place_.is_root &&
                  place_.cfg.world_size > (place_.serves_locals ? place_.cfg.local_world_size : 1);
    // Listening comes first: every peer of this rank retries until it does, so nothing else
    // (the descriptor limit below reads /proc/self/fd) may stand before it.
    if (place_.serves_locals) {
        SDDP_TRY(fd, listen_abstract(local_socket_name(place_.cfg)));
        local_listener_ = std::move(fd);
    }
    // A tree leader listens on its own node, where the port may be busy though rank 0's was
    // free: the error names this node, and the local listener stays up so that run() can
    // tell the node's other ranks why at once.
    std::optional<Error> tcp_failed;
    if (need_tcp) {
        const std::string who = place_.is_root ? std::string("rank 0")
                                               : "node " + place_.host + " (leader of node " +
                                                     std::to_string(place_.cfg.node_rank) +
                                                     " in the rendezvous tree, rank " +
                                                     std::to_string(place_.cfg.rank) + ")";
        Result<Fd> fd = listen_tcp(
            place_.tree ? place_.cfg.leaders[static_cast<std::size_t>(place_.cfg.node_rank)].port
                        : place_.cfg.master_port,
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
            place_.tree ? place_.tree_children.size() +
                              static_cast<std::uint64_t>(place_.cfg.local_world_size) + 1
            : place_.is_root ? place_.cfg.world_size
                             : place_.cfg.local_world_size;
        fd_limit_ = FdLimitRaise(links + 320);
    }
    admission_.emplace(
        static_cast<std::size_t>(std::clamp<std::uint64_t>(fd_limit_.soft() / 4, 16, 4096)),
        place_.handshake_timeout);
    SDDP_CHECK(arm_listeners());
    if (serves) spare_fd_ = Fd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    if (tcp_failed) return *tcp_failed;
    return ok_status();
}

Status Join::arm_listeners() {
    Status armed = ok_status();
    for (auto [fd, id] : {std::pair{tcp_listener_.get(), kTcpListenerId},
                          std::pair{local_listener_.get(), kLocalListenerId}}) {
        if (fd < 0) continue;
        if (!node_.loop().add(fd, EPOLLIN, id) && armed.ok()) {
            armed = make_error(Errc::io, "epoll_ctl: " + errno_text(errno));
        }
    }
    return armed;
}

Status Join::connect_parent() {
    if (place_.is_root) return ok_status();
    ParentTarget target;
    if (place_.local_leaf) {
        target.local = true;
        target.local_name = local_socket_name(place_.cfg);
        target.description = "the node leader (local rank 0 of node " +
                             std::to_string(place_.cfg.node_rank) + " on " + place_.host + ")";
    } else if (place_.tree && place_.parent_node > 0) {
        const auto& up = place_.cfg.leaders[static_cast<std::size_t>(place_.parent_node)];
        target.host = up.host;
        target.port = up.port;
        target.description = "the node leader of node " + std::to_string(place_.parent_node) +
                             " at " + up.host + ":" + std::to_string(up.port);
        target.pace_index = static_cast<std::uint32_t>(
            tree_sibling_index(place_.cfg.node_rank, place_.cfg.tree_fanout));
    } else {
        target.host = place_.cfg.master_addr;
        target.port = place_.cfg.master_port;
        target.description = "rank 0 at " + place_.master;
        // In the tree rank 0 admits only its k children: pace by position among them.
        target.pace_index = static_cast<std::uint32_t>(
            place_.tree ? tree_sibling_index(place_.cfg.node_rank, place_.cfg.tree_fanout)
                        : std::max(place_.cfg.node_rank, 0));
    }
    JoinWait wait;
    // A leader of a node (and of no child nodes) serves its locals while it joins: their
    // handshakes overlap its own instead of waiting in the backlog behind it. A tree leader
    // would also admit child leaders, whose reports need node_.parent_link() to pass on: it waits
    // plainly.
    const bool overlap = place_.serves_locals && !tcp_listener_.valid();
    if (overlap) {
        wait.idle = [this](int fd, short events, Clock::time_point until) {
            return serve_locals_until(fd, events, until);
        };
        wait.stopped = [this] { return node_.failure().has_value(); };
    }
    Result<ParentLink> link = join_parent(target, place_.cfg, secret_, place_.host,
                                          place_.deadline_from(Clock::now()), wait);
    if (node_.failure()) return *node_.failure();
    if (!link.ok()) return link.error();
    Link& l = node_.add_link(std::move(*link->conn));
    l.kind = LinkKind::parent;
    l.via_local = target.local;
    l.rank = link->rank;
    l.host = link->host;
    node_.set_parent(l);
    node_.update_interest(l);
    // The locals welcomed while this rank was joining could not be reported yet.
    report_joined();
    // The parent may already have sent more than the welcome (a broadcast right after the
    // join): those bytes sit in the buffer and no epoll event will announce them again.
    node_.process_frames(l);
    if (node_.failure()) return *node_.failure();
    return ok_status();
}

short Join::serve_locals_until(int fd, short events, Clock::time_point until) {
    if (!node_.loop().valid()) return 0;
    parent_wait_revents_ = 0;
    bool watched = false;
    if (fd >= 0) {
        watched = node_.loop().add(fd, (events & POLLOUT) ? EPOLLOUT : EPOLLIN, kParentWaitId);
        if (!watched) {
            // Not watchable (cannot happen for a socket): fall back to a plain wait on it.
            pollfd p{fd, events, 0};
            return ::poll(&p, 1, poll_timeout_ms(until)) > 0 ? p.revents : short{0};
        }
    }
    while (parent_wait_revents_ == 0 && !node_.failure() && Clock::now() < until) node_.pump(until);
    if (watched) node_.loop().remove(fd);
    return parent_wait_revents_;
}

void Join::turn_away_locals(const Error& why, Clock::time_point deadline) {
    // Without this the locals would retry the vanished leader until their own timeout and then
    // report only that they could not reach it. They start with the leader, so they are in the
    // backlog already or about to be: a short, bounded wait catches them.
    if (!local_listener_.valid() && !tcp_listener_.valid()) return;
    // The reason names hosts, ports and what went wrong: it goes only to peers that prove they
    // belong to this step, through the usual handshake (see on_hello); anyone else who connects
    // meanwhile is closed without a word. The child leaders of the tree are told the same way,
    // and their own fail() passes the reason on to their subtrees.
    turning_away_ = make_error(
        why.code, "the node leader, " + place_.self + ", could not join: " + why.message);
    // Locals welcomed while this leader was joining (connect_parent serves them meanwhile) hear
    // the reason over their sealed links at once.
    const auto abort_frame = std::make_shared<const Bytes>(
        wire::encode_abort(wire::Abort{static_cast<std::uint32_t>(turning_away_->code),
                                       turning_away_->message.substr(0, wire::kMaxReasonSize),
                                       {}}));
    for (Link* c : node_.child_links()) {
        if (!c->via_local) continue;
        node_.send_to(*c, abort_frame);
        c->conn.shutdown_write();
        ++turned_away_;
    }
    // A leader that gave up at its own deadline still has the locals' slack (they time out
    // place_.margin/2 after it, see deadline_from) to tell them why.
    const auto until =
        std::min(deadline + place_.margin / 2, Clock::now() + std::chrono::seconds(1));
    const int expected =
        (local_listener_.valid() ? place_.cfg.local_world_size - 1 : 0) +
        (tcp_listener_.valid() ? static_cast<int>(place_.tree_children.size()) : 0);
    while (turned_away_ < expected && Clock::now() < until && !node_.failure()) node_.pump(until);
    // Give the aborts a bounded moment to leave before the sockets close.
    while (node_.loop().writers() > 0 && Clock::now() < until && !node_.failure())
        node_.pump(until);
}

void Join::tell_why_and_close(Link& link, const wire::Hello& h) {
    admission_->leave(link.id);
    link.kind = LinkKind::child;  // out of the handshake table; never one of the children
    link.rank = h.rank;
    link.host = wire::printable(h.host, wire::kMaxHostSize);
    // Welcomed first, so the abort travels sealed: the peer trusts it, and it keeps its code.
    welcome(link, h);
    node_.send_to(link, std::make_shared<const Bytes>(wire::encode_abort(
                            wire::Abort{static_cast<std::uint32_t>(turning_away_->code),
                                        turning_away_->message.substr(0, wire::kMaxReasonSize),
                                        {}})));
    link.conn.shutdown_write();
    ++turned_away_;
}

bool Join::join_complete() const {
    return !join_ || join_->complete();
}

std::string Join::describe_join_missing() const {
    if (!join_) return "waiting for nothing";
    // Tree: the child leaders that never came, and those whose subtrees are still incomplete.
    std::string tree_part;
    if (join_->tree()) {
        auto nodes_text = [&](const std::vector<int>& nodes) {
            std::string t;
            int listed = 0;
            for (const int n : nodes) {
                if (listed++ == 8) return t + ", ...";
                const auto& e = place_.cfg.leaders[static_cast<std::size_t>(n)];
                t += (t.empty() ? "" : ", ") + std::to_string(n) + " (" + e.host + ":" +
                     std::to_string(e.port) + ")";
            }
            return t;
        };
        const std::vector<int> absent = join_->missing_child_nodes();
        const std::vector<int> partial = join_->incomplete_child_nodes();
        if (!absent.empty()) {
            tree_part += "; the leaders of child nodes " + nodes_text(absent) +
                         " never joined node " + std::to_string(place_.cfg.node_rank) + "'s leader";
        }
        if (!partial.empty()) {
            tree_part += "; the subtrees of child nodes " + nodes_text(partial) +
                         " are incomplete (fanout " + std::to_string(place_.cfg.tree_fanout) + ")";
        }
    }
    if (place_.is_root && join_->known() < place_.cfg.world_size) {
        const std::vector<int> missing = join_->missing_ranks();
        std::string s = "waiting for " + std::to_string(missing.size()) + " of " +
                        std::to_string(place_.cfg.world_size) + " ranks to join rank 0 at " +
                        place_.master + ": missing ranks " + format_rank_list(missing);
        std::string partial;
        int listed = 0;
        for (const auto& [via, p] : join_->incomplete_leaders()) {
            if (listed++ == 8) {
                partial += ", ...";
                break;
            }
            const auto link = node_.links().find(via);
            const std::string host = link == node_.links().end() ? "?" : link->second->host;
            partial += (partial.empty() ? "" : ", ") + host + " (node leader rank " +
                       std::to_string(p.rank) + ", " + std::to_string(p.locals_joined + 1) +
                       " of " + std::to_string(p.local_world_size) + " local ranks joined)";
        }
        if (join_->locals_joined() < place_.cfg.local_world_size - 1) {
            partial += (partial.empty() ? "" : ", ") + place_.host + " (rank 0's own node, " +
                       std::to_string(join_->locals_joined() + 1) + " of " +
                       std::to_string(place_.cfg.local_world_size) + " local ranks joined)";
        }
        if (!partial.empty() && !join_->tree()) s += "; incomplete nodes: " + partial;
        if (join_->locals_joined() < place_.cfg.local_world_size - 1 && join_->tree()) {
            s += "; rank 0's own node has " + std::to_string(join_->locals_joined() + 1) + " of " +
                 std::to_string(place_.cfg.local_world_size) + " local ranks";
        }
        return s + tree_part + ". Those ranks did not start, crashed, or cannot reach " +
               (join_->tree() ? "their parent node leader" : place_.master);
    }
    if (join_->tree() && !tree_part.empty() &&
        join_->locals_joined() >= place_.cfg.local_world_size - 1) {
        return "waiting for the subtree of node " + std::to_string(place_.cfg.node_rank) +
               tree_part;
    }
    return "waiting for local ranks " + format_rank_list(join_->missing_local_ranks()) +
           " of node " + std::to_string(place_.cfg.node_rank) + " (" +
           std::to_string(place_.cfg.local_world_size) +
           " local ranks) to join their node leader; they did not start or crashed";
}

void Join::close_listeners() {
    for (Fd* fd : {&tcp_listener_, &local_listener_}) {
        if (fd->valid() && node_.loop().valid()) node_.loop().remove(fd->get());
        fd->reset();
    }
    spare_fd_.reset();
    listeners_paused_ = false;
}

void Join::accept_from(bool local) {
    Fd& listener = local ? local_listener_ : tcp_listener_;
    // A bounded batch per wake-up, so a connection storm cannot starve handshakes in progress.
    for (int i = 0; i < 64 && listener.valid(); ++i) {
        const int fd = ::accept4(listener.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd >= 0) {
            admit(Fd(fd), local);
            continue;
        }
        const int err = errno;
        if (err == EAGAIN || err == EWOULDBLOCK) return;
        if (err == EINTR || err == ECONNABORTED || err == EPROTO) continue;
        if (err == EMFILE || err == ENFILE) {
            // Out of descriptors: free the spare, accept and drop one connection (the client
            // retries with backoff), and take the spare back. Without a spare, stop listening
            // for a moment rather than spin on a listener that stays readable.
            if (shed_++ % 1000 == 0) {
                log(place_.self + ": out of file descriptors (" + errno_text(err) +
                    "); shedding connections, clients will retry. Raise `ulimit -n`.");
            }
            if (spare_fd_.valid()) {
                spare_fd_.reset();
                const int drop = ::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC);
                if (drop >= 0) ::close(drop);
                spare_fd_ = Fd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
                if (spare_fd_.valid()) continue;
            }
            listeners_paused_ = true;
            listeners_paused_until_ = Clock::now() + std::chrono::milliseconds(100);
            for (const Fd* l : {&tcp_listener_, &local_listener_}) {
                if (l->valid()) node_.loop().remove(l->get());
            }
            return;
        }
        log(place_.self + ": accept failed: " + errno_text(err));
        return;
    }
}

void Join::admit(Fd fd, bool local) {
    if (local) {
        // Not even a challenge for another user's process: it found the socket's name in
        // /proc/net/unix, and this step's ranks all run as our user.
        if (std::optional<std::string> foreign = foreign_local_peer(fd.get())) {
            if (refusals_++ < kRefusalsLoggedInFull || refusals_ % 1000 == 0) {
                log(place_.self +
                    ": closed a connection on the node-local socket without a word: " + *foreign);
            }
            return;
        }
    }
    Result<wire::Nonce> nonce = make_nonce();
    if (!nonce.ok()) {
        log(place_.self + ": " + nonce.error().message);
        return;
    }
    if (!local) {
        const int one = 1;
        ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    const std::string addr = local ? "the node-local socket" : peer_address(fd.get());
    Link& link = node_.add_link(Connection(std::move(fd), addr));
    const std::uint64_t id = link.id;
    link.via_local = local;
    link.server_nonce = *nonce;
    const std::string host = local ? addr : host_part(addr);
    const Admission::Decision d = admission_->arrive(id, host, Clock::now());
    if (d.evict) {
        // The table is full: the busiest address gives up its oldest slot
        // (rendezvous/protocol/admission.hpp).
        if (d.report) report_drop(host, "evicted to make room: the handshake table was full");
        ++shed_;
        node_.remove_link(*d.evict);
    }
    node_.send_to(link, std::make_shared<const Bytes>(
                            wire::encode_challenge(wire::Challenge{link.server_nonce})));
}

void Join::expire_handshakes(Clock::time_point now) {
    for (const Admission::Expired& e : admission_->expire(now)) {
        if (e.report) {
            report_drop(
                e.address,
                ("no valid hello within " + seconds_text(place_.handshake_timeout)).c_str());
        }
        node_.remove_link(e.id);
    }
}

void Join::report_drop(const std::string& address, const char* why) {
    // Once per address: a flood must not turn into a flood of log lines.
    log(place_.self + ": dropping unauthenticated connections from " + address + " (" + why +
        "); a port scanner or a flood, since MASTER_PORT is derivable from the job id. The "
        "busiest address gives way first, so ranks from elsewhere still get in; further drops "
        "from this address are not reported");
}

void Join::refuse(Link& link, const std::string& full_reason, const wire::Hello* hello) {
    if (turning_away_) {
        node_.remove_link(link.id);  // see turn_away_locals: only this step's peers hear anything
        return;
    }
    const std::string reason = full_reason.substr(0, wire::kMaxReasonSize);
    if (refusals_++ < kRefusalsLoggedInFull || refusals_ % 1000 == 0) {
        log(place_.self + ": refused a connection from " + link.conn.addr() + ": " + reason +
            (refusals_ > kRefusalsLoggedInFull ? " (" + std::to_string(refusals_) + " so far)"
                                               : ""));
    }
    // Best effort: a reject is tiny and the socket buffer empty, so one write sends it whole.
    wire::Reject reject{reason, {}};
    if (hello != nullptr) {
        reject.mac = reject_proof(secret_, tag_, hello->client_nonce, link.server_nonce, reason);
    }
    link.conn.send(wire::encode_reject(reject));
    link.conn.flush();
    link.conn.shutdown_write();
    node_.remove_link(link.id);
}

bool Join::proves_step(const Link& link, const wire::Hello& h) const {
    return h.step_tag == tag_ &&
           constant_time_equal(client_proof(secret_, link.server_nonce, h), h.mac);
}

std::optional<std::string> Join::check_hello(const Link& link, const wire::Hello& h) const {
    if (h.step_tag != tag_) {
        // Not this step's tag in return: a prober learns nothing about the step it reached.
        return "step tag mismatch: the peer belongs to another step ('" +
               wire::printable(h.step_tag, 64) + "')";
    }
    // Only now, with the step confirmed, does the proof mean anything.
    if (!constant_time_equal(client_proof(secret_, link.server_nonce, h), h.mac)) {
        return "authentication failed: the peer does not hold this step's secret";
    }
    if (h.world_size != place_.cfg.world_size) {
        return "world size mismatch: the peer says " + std::to_string(h.world_size) + ", rank " +
               std::to_string(place_.cfg.rank) + " has " + std::to_string(place_.cfg.world_size);
    }
    if (link.via_local) {
        return join_->check_local(h.rank, h.local_rank, h.local_world_size, h.node_rank);
    }
    if (!place_.is_root && place_.tree_children.empty())
        return "this rank does not accept TCP peers";
    std::optional<std::string> why =
        join_->check_direct(h.rank, h.local_rank, h.local_world_size, h.node_rank);
    if (why && place_.tree) {
        *why += " (fanout " + std::to_string(place_.cfg.tree_fanout) + "; are " +
                contract::kTreeFanoutVar + " and the node list the same on every rank?)";
    }
    return why;
}

bool Join::on_hello(Link& link, const OwnedFrame& frame) {
    Result<wire::Hello> hello = wire::decode_hello(frame.payload());
    if (!hello.ok()) {
        refuse(link, hello.error().message);
        return false;
    }
    if (turning_away_) {
        if (!proves_step(link, *hello)) {
            node_.remove_link(link.id);  // not this step's: it learns nothing
            return false;
        }
        tell_why_and_close(link, *hello);
        return false;
    }
    if (std::optional<std::string> why = check_hello(link, *hello)) {
        refuse(link, *why, &*hello);
        return false;
    }
    accept_child(link, *hello);
    return !node_.failure();
}

void Join::welcome(Link& link, const wire::Hello& h) {
    wire::Welcome w;
    w.rank = place_.cfg.rank;
    w.host =
        place_.host.substr(0, wire::kMaxHostSize);  // what encode_welcome sends: what is proven
    w.mac = server_proof(secret_, tag_, h.client_nonce, link.server_nonce, h.rank, place_.cfg.rank,
                         w.host);
    node_.send_to(link, std::make_shared<const Bytes>(wire::encode_welcome(w)));
    link.conn.seal(session_key(secret_, tag_, h.client_nonce, link.server_nonce), false);
}

void Join::accept_child(Link& link, const wire::Hello& h) {
    admission_->leave(link.id);
    link.kind = LinkKind::child;
    link.rank = h.rank;
    link.local_rank = h.local_rank;
    link.local_world_size = h.local_world_size;
    link.node_rank = h.node_rank;
    link.host = wire::printable(h.host, wire::kMaxHostSize);
    node_.child_links().push_back(&link);
    welcome(link, h);
    if (link.via_local) {
        join_->add_local(link.id, h.rank, h.local_rank);
    } else {
        join_->add_direct(link.id, h.rank, h.local_world_size, h.node_rank);
    }
    if (!place_.is_root) unreported_.ranks.push_back(h.rank);
}

// Once per turn of the loop, not once per rank: the ranks welcomed in one turn go up in one
// frame, which rank 0 checks and counts once. Its view of who is missing stays exact to the turn.
void Join::report_joined() {
    if (unreported_.ranks.empty() || node_.parent_link() == nullptr || node_.failure()) return;
    node_.send_to(*node_.parent_link(),
                  std::make_shared<const Bytes>(wire::encode_joined(unreported_)));
    unreported_.ranks.clear();
}

void Join::on_joined(Link& link, const OwnedFrame& frame) {
    Result<wire::Joined> joined =
        wire::decode_joined(frame.payload(), static_cast<std::uint32_t>(place_.cfg.world_size));
    if (!joined.ok()) {
        node_.fail(make_error(Errc::protocol, place_.self + ": " + node_.describe(link) + ": " +
                                                  joined.error().message),
                   &link);
        return;
    }
    if (joined->ranks.empty() && join_->tree() && !link.via_local) {
        if (std::optional<std::string> bad = join_->subtree_complete(link.id)) {
            node_.fail(make_error(Errc::protocol, place_.self + ": node leader " +
                                                      node_.describe(link) + " " + *bad),
                       &link);
        }
        return;
    }
    for (const std::int32_t r : joined->ranks) {
        std::optional<std::string> bad;
        if (link.via_local) {
            bad = "reports rank " + std::to_string(r) + " but is not a node leader";
        } else {
            bad = join_->report_local(link.id, r);
        }
        if (bad) {
            node_.fail(
                make_error(Errc::invalid_input,
                           place_.self + ": node leader " + node_.describe(link) + " " + *bad +
                               ": are SLURM_LOCALID/SLURM_NODEID consistent across the job?"),
                &link);
            return;
        }
    }
    if (!place_.is_root) {
        // Passed up at the end of this turn, after the ranks welcomed here before them.
        unreported_.ranks.insert(unreported_.ranks.end(), joined->ranks.begin(),
                                 joined->ranks.end());
    }
}

}  // namespace sddp::tcp
