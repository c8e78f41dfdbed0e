// SPDX-License-Identifier: Apache-2.0
// The server side of the handshake and the join phase: who may connect, and when everyone has.
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
#include "rendezvous/tcp/message_text.hpp"
#include "rendezvous/tcp/node.hpp"

namespace sddp::tcp {
namespace {

constexpr std::size_t kRefusalsLoggedInFull = 10;

// "127.0.0.2" from "127.0.0.2:41234" (or "[::1]" from "[::1]:41234"): admission counts hosts,
// not connections.
std::string host_part(const std::string& addr) {
    const auto colon = addr.rfind(':');
    return colon == std::string::npos ? addr : addr.substr(0, colon);
}

}  // namespace

Status Node::run_join() {
    const auto start = Clock::now();
    const auto deadline = deadline_from(start);
    if (cfg_.world_size == 1) return ok_status();
    if (Status listening = start_listening(); !listening.ok()) {
        if (serves_locals_) turn_away_locals(listening.error(), deadline);
        return listening;
    }
    if (is_root_ || serves_locals_ || !tree_children_.empty()) {
        join_.emplace(is_root_, cfg_.world_size, serves_locals_ ? cfg_.local_world_size : 1,
                      cfg_.rank, cfg_.node_rank, tree_children_);
    }
    // A node leader reaches its parent before serving its locals and child leaders; they wait in
    // the listen backlog.
    if (Status up = connect_parent(); !up.ok()) {
        if (serves_locals_) turn_away_locals(up.error(), deadline);
        return up;
    }
    while (!join_complete()) {
        if (failed_) return *failed_;
        if (parent_ != nullptr && parent_->conn.eof()) {
            return fail(
                make_error(Errc::peer_lost, self_ + ": lost connection to " + describe(*parent_) +
                                                " while ranks were joining; it exited or "
                                                "was killed, see its log"),
                parent_);
        }
        for (Link* c : children_) {
            if (c->conn.eof()) {
                return fail(
                    make_error(Errc::peer_lost, self_ + ": lost connection to " + describe(*c) +
                                                    " while ranks were joining; it exited "
                                                    "or was killed, see its log"),
                    c);
            }
        }
        if (Clock::now() >= deadline) {
            return fail(make_error(Errc::timeout, self_ + ": timed out after " +
                                                      seconds_text(Clock::now() - start) + " " +
                                                      describe_join_missing()));
        }
        pump(deadline);
    }
    if (failed_) return *failed_;
    if (tree_ && parent_ != nullptr) {
        // The whole subtree is in and every rank of it was reported: say so, so the parent's
        // join (and rank 0's) completes exactly when everyone below has joined.
        send_to(*parent_, std::make_shared<const Bytes>(wire::encode_joined(wire::Joined{})));
        sddp::log(LogLevel::info,
                  "rendezvous: " + self_ + ": node " + std::to_string(cfg_.node_rank) +
                      "'s leader joined node " + std::to_string(parent_node_) +
                      "'s leader (tree fanout " + std::to_string(cfg_.tree_fanout) + ", depth " +
                      std::to_string(
                          tree_depth(static_cast<int>(cfg_.leaders.size()), cfg_.tree_fanout)) +
                      ") with " + std::to_string(tree_children_.size()) + " child node(s)");
    }
    // Everyone is here: stop accepting, so late strangers get a refused connection.
    close_listeners();
    std::vector<std::uint64_t> stale;
    for (const auto& [id, link] : links_) {
        if (link->kind == Kind::pending) stale.push_back(id);
    }
    for (const std::uint64_t id : stale) remove_link(id);
    return wait_for_output(deadline, "the join");
}

void Node::turn_away_locals(const Error& why, Clock::time_point deadline) {
    // Without this the locals would retry the vanished leader until their own timeout and then
    // report only that they could not reach it. They start with the leader, so they are in the
    // backlog already or about to be: a short, bounded wait catches them.
    if (!local_listener_.valid() && !tcp_listener_.valid()) return;
    // The reason names hosts, ports and what went wrong: it goes only to peers that prove they
    // belong to this step, through the usual handshake (see on_hello); anyone else who connects
    // meanwhile is closed without a word. The child leaders of the tree are told the same way,
    // and their own fail() passes the reason on to their subtrees.
    turning_away_ =
        make_error(why.code, "the node leader, " + self_ + ", could not join: " + why.message);
    // Locals welcomed while this leader was joining (connect_parent serves them meanwhile) hear
    // the reason over their sealed links at once.
    const auto abort_frame = std::make_shared<const Bytes>(
        wire::encode_abort(wire::Abort{static_cast<std::uint32_t>(turning_away_->code),
                                       turning_away_->message.substr(0, wire::kMaxReasonSize),
                                       {}}));
    for (Link* c : children_) {
        if (!c->via_local) continue;
        send_to(*c, abort_frame);
        c->conn.shutdown_write();
        ++turned_away_;
    }
    // A leader that gave up at its own deadline still has the locals' slack (they time out
    // margin_/2 after it, see deadline_from) to tell them why.
    const auto until = std::min(deadline + margin_ / 2, Clock::now() + std::chrono::seconds(1));
    const int expected = (local_listener_.valid() ? cfg_.local_world_size - 1 : 0) +
                         (tcp_listener_.valid() ? static_cast<int>(tree_children_.size()) : 0);
    while (turned_away_ < expected && Clock::now() < until && !failed_) pump(until);
    // Give the aborts a bounded moment to leave before the sockets close.
    while (loop_.writers() > 0 && Clock::now() < until && !failed_) pump(until);
}

void Node::tell_why_and_close(Link& link, const wire::Hello& h) {
    admission_->leave(link.id);
    link.kind = Kind::child;  // out of the handshake table; never one of children_
    link.rank = h.rank;
    link.host = wire::printable(h.host, wire::kMaxHostSize);
    // Welcomed first, so the abort travels sealed: the peer trusts it, and it keeps its code.
    welcome(link, h);
    send_to(link, std::make_shared<const Bytes>(wire::encode_abort(
                      wire::Abort{static_cast<std::uint32_t>(turning_away_->code),
                                  turning_away_->message.substr(0, wire::kMaxReasonSize),
                                  {}})));
    link.conn.shutdown_write();
    ++turned_away_;
}

bool Node::join_complete() const {
    return !join_ || join_->complete();
}

std::string Node::describe_join_missing() const {
    if (!join_) return "waiting for nothing";
    // Tree: the child leaders that never came, and those whose subtrees are still incomplete.
    std::string tree_part;
    if (join_->tree()) {
        auto nodes_text = [&](const std::vector<int>& nodes) {
            std::string t;
            int listed = 0;
            for (const int n : nodes) {
                if (listed++ == 8) return t + ", ...";
                const auto& e = cfg_.leaders[static_cast<std::size_t>(n)];
                t += (t.empty() ? "" : ", ") + std::to_string(n) + " (" + e.host + ":" +
                     std::to_string(e.port) + ")";
            }
            return t;
        };
        const std::vector<int> absent = join_->missing_child_nodes();
        const std::vector<int> partial = join_->incomplete_child_nodes();
        if (!absent.empty()) {
            tree_part += "; the leaders of child nodes " + nodes_text(absent) +
                         " never joined node " + std::to_string(cfg_.node_rank) + "'s leader";
        }
        if (!partial.empty()) {
            tree_part += "; the subtrees of child nodes " + nodes_text(partial) +
                         " are incomplete (fanout " + std::to_string(cfg_.tree_fanout) + ")";
        }
    }
    if (is_root_ && join_->known() < cfg_.world_size) {
        const std::vector<int> missing = join_->missing_ranks();
        std::string s = "waiting for " + std::to_string(missing.size()) + " of " +
                        std::to_string(cfg_.world_size) + " ranks to join rank 0 at " + master_ +
                        ": missing ranks " + format_rank_list(missing);
        std::string partial;
        int listed = 0;
        for (const auto& [via, p] : join_->incomplete_leaders()) {
            if (listed++ == 8) {
                partial += ", ...";
                break;
            }
            const auto link = links_.find(via);
            const std::string host = link == links_.end() ? "?" : link->second->host;
            partial += (partial.empty() ? "" : ", ") + host + " (node leader rank " +
                       std::to_string(p.rank) + ", " + std::to_string(p.locals_joined + 1) +
                       " of " + std::to_string(p.local_world_size) + " local ranks joined)";
        }
        if (join_->locals_joined() < cfg_.local_world_size - 1) {
            partial += (partial.empty() ? "" : ", ") + host_ + " (rank 0's own node, " +
                       std::to_string(join_->locals_joined() + 1) + " of " +
                       std::to_string(cfg_.local_world_size) + " local ranks joined)";
        }
        if (!partial.empty() && !join_->tree()) s += "; incomplete nodes: " + partial;
        if (join_->locals_joined() < cfg_.local_world_size - 1 && join_->tree()) {
            s += "; rank 0's own node has " + std::to_string(join_->locals_joined() + 1) + " of " +
                 std::to_string(cfg_.local_world_size) + " local ranks";
        }
        return s + tree_part + ". Those ranks did not start, crashed, or cannot reach " +
               (join_->tree() ? "their parent node leader" : master_);
    }
    if (join_->tree() && !tree_part.empty() &&
        join_->locals_joined() >= cfg_.local_world_size - 1) {
        return "waiting for the subtree of node " + std::to_string(cfg_.node_rank) + tree_part;
    }
    return "waiting for local ranks " + format_rank_list(join_->missing_local_ranks()) +
           " of node " + std::to_string(cfg_.node_rank) + " (" +
           std::to_string(cfg_.local_world_size) +
           " local ranks) to join their node leader; they did not start or crashed";
}

void Node::close_listeners() {
    for (Fd* fd : {&tcp_listener_, &local_listener_}) {
        if (fd->valid() && loop_.valid()) loop_.remove(fd->get());
        fd->reset();
    }
    spare_fd_.reset();
    listeners_paused_ = false;
}

void Node::accept_from(bool local) {
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
                log(self_ + ": out of file descriptors (" + errno_text(err) +
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
                if (l->valid()) loop_.remove(l->get());
            }
            return;
        }
        log(self_ + ": accept failed: " + errno_text(err));
        return;
    }
}

void Node::admit(Fd fd, bool local) {
    if (local) {
        // Not even a challenge for another user's process: it found the socket's name in
        // /proc/net/unix, and this step's ranks all run as our user.
        if (std::optional<std::string> foreign = foreign_local_peer(fd.get())) {
            if (refusals_++ < kRefusalsLoggedInFull || refusals_ % 1000 == 0) {
                log(self_ +
                    ": closed a connection on the node-local socket without a word: " + *foreign);
            }
            return;
        }
    }
    Result<wire::Nonce> nonce = make_nonce();
    if (!nonce.ok()) {
        log(self_ + ": " + nonce.error().message);
        return;
    }
    if (!local) {
        const int one = 1;
        ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    const std::string addr = local ? "the node-local socket" : peer_address(fd.get());
    const std::uint64_t id = next_id_++;
    auto owned = std::make_unique<Link>(id, Connection(std::move(fd), addr));
    Link& link = *owned;
    link.via_local = local;
    link.server_nonce = *nonce;
    const std::string host = local ? addr : host_part(addr);
    const Admission::Decision d = admission_->arrive(id, host, Clock::now());
    links_.emplace(id, std::move(owned));
    if (d.evict) {
        // The table is full: the busiest address gives up its oldest slot
        // (rendezvous/protocol/admission.hpp).
        if (d.report) report_drop(host, "evicted to make room: the handshake table was full");
        ++shed_;
        remove_link(*d.evict);
    }
    send_to(link, std::make_shared<const Bytes>(
                      wire::encode_challenge(wire::Challenge{link.server_nonce})));
}

void Node::expire_handshakes(Clock::time_point now) {
    for (const Admission::Expired& e : admission_->expire(now)) {
        if (e.report) {
            report_drop(e.address,
                        ("no valid hello within " + seconds_text(handshake_timeout_)).c_str());
        }
        remove_link(e.id);
    }
}

void Node::report_drop(const std::string& address, const char* why) {
    // Once per address: a flood must not turn into a flood of log lines.
    log(self_ + ": dropping unauthenticated connections from " + address + " (" + why +
        "); a port scanner or a flood, since MASTER_PORT is derivable from the job id. The "
        "busiest address gives way first, so ranks from elsewhere still get in; further drops "
        "from this address are not reported");
}

void Node::refuse(Link& link, const std::string& full_reason, const wire::Hello* hello) {
    if (turning_away_) {
        remove_link(link.id);  // see turn_away_locals: only this step's peers hear anything
        return;
    }
    const std::string reason = full_reason.substr(0, wire::kMaxReasonSize);
    if (refusals_++ < kRefusalsLoggedInFull || refusals_ % 1000 == 0) {
        log(self_ + ": refused a connection from " + link.conn.addr() + ": " + reason +
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
    remove_link(link.id);
}

bool Node::proves_step(const Link& link, const wire::Hello& h) const {
    return h.step_tag == tag_ &&
           constant_time_equal(client_proof(secret_, link.server_nonce, h), h.mac);
}

std::optional<std::string> Node::check_hello(const Link& link, const wire::Hello& h) const {
    if (h.step_tag != tag_) {
        // Not this step's tag in return: a prober learns nothing about the step it reached.
        return "step tag mismatch: the peer belongs to another step ('" +
               wire::printable(h.step_tag, 64) + "')";
    }
    // Only now, with the step confirmed, does the proof mean anything.
    if (!constant_time_equal(client_proof(secret_, link.server_nonce, h), h.mac)) {
        return "authentication failed: the peer does not hold this step's secret";
    }
    if (h.world_size != cfg_.world_size) {
        return "world size mismatch: the peer says " + std::to_string(h.world_size) + ", rank " +
               std::to_string(cfg_.rank) + " has " + std::to_string(cfg_.world_size);
    }
    if (link.via_local) {
        return join_->check_local(h.rank, h.local_rank, h.local_world_size, h.node_rank);
    }
    if (!is_root_ && tree_children_.empty()) return "this rank does not accept TCP peers";
    std::optional<std::string> why =
        join_->check_direct(h.rank, h.local_rank, h.local_world_size, h.node_rank);
    if (why && tree_) {
        *why += " (fanout " + std::to_string(cfg_.tree_fanout) + "; are " +
                contract::kTreeFanoutVar + " and the node list the same on every rank?)";
    }
    return why;
}

bool Node::on_hello(Link& link, const OwnedFrame& frame) {
    Result<wire::Hello> hello = wire::decode_hello(frame.payload());
    if (!hello.ok()) {
        refuse(link, hello.error().message);
        return false;
    }
    if (turning_away_) {
        if (!proves_step(link, *hello)) {
            remove_link(link.id);  // not this step's: it learns nothing
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
    return !failed_;
}

void Node::welcome(Link& link, const wire::Hello& h) {
    wire::Welcome w;
    w.rank = cfg_.rank;
    w.host = host_.substr(0, wire::kMaxHostSize);  // what encode_welcome sends: what is proven
    w.mac =
        server_proof(secret_, tag_, h.client_nonce, link.server_nonce, h.rank, cfg_.rank, w.host);
    send_to(link, std::make_shared<const Bytes>(wire::encode_welcome(w)));
    link.conn.seal(session_key(secret_, tag_, h.client_nonce, link.server_nonce), false);
}

void Node::accept_child(Link& link, const wire::Hello& h) {
    admission_->leave(link.id);
    link.kind = Kind::child;
    link.rank = h.rank;
    link.local_rank = h.local_rank;
    link.local_world_size = h.local_world_size;
    link.node_rank = h.node_rank;
    link.host = wire::printable(h.host, wire::kMaxHostSize);
    children_.push_back(&link);
    welcome(link, h);
    if (link.via_local) {
        join_->add_local(link.id, h.rank, h.local_rank);
    } else {
        join_->add_direct(link.id, h.rank, h.local_world_size, h.node_rank);
    }
    if (!is_root_ && parent_ != nullptr) {
        // Tell rank 0 at once, so that its view of who is missing stays exact.
        send_to(*parent_,
                std::make_shared<const Bytes>(wire::encode_joined(wire::Joined{{h.rank}})));
    }
}

void Node::on_joined(Link& link, const OwnedFrame& frame) {
    Result<wire::Joined> joined =
        wire::decode_joined(frame.payload(), static_cast<std::uint32_t>(cfg_.world_size));
    if (!joined.ok()) {
        fail(make_error(Errc::protocol,
                        self_ + ": " + describe(link) + ": " + joined.error().message),
             &link);
        return;
    }
    if (joined->ranks.empty() && join_->tree() && !link.via_local) {
        if (std::optional<std::string> bad = join_->subtree_complete(link.id)) {
            fail(make_error(Errc::protocol, self_ + ": node leader " + describe(link) + " " + *bad),
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
            fail(make_error(Errc::invalid_input,
                            self_ + ": node leader " + describe(link) + " " + *bad +
                                ": are SLURM_LOCALID/SLURM_NODEID consistent across the job?"),
                 &link);
            return;
        }
    }
    if (!is_root_ && parent_ != nullptr && !joined->ranks.empty()) {
        // Pass the news up at once, so rank 0's view of who is missing stays exact.
        send_to(*parent_, std::make_shared<const Bytes>(wire::encode_joined(*joined)));
    }
}

}  // namespace sddp::tcp
