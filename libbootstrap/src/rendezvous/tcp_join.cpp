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

#include "core/hmac_sha256.hpp"
#include "rendezvous/tcp_auth.hpp"
#include "rendezvous/tcp_node.hpp"
#include "rendezvous/tcp_rank_list.hpp"

namespace sddp::tcp {
namespace {

constexpr std::uint64_t kSelfOwner = 3;  // owner_ entry for rank 0 itself
constexpr std::size_t kRefusalsLoggedInFull = 10;

}  // namespace

Status Node::run_join() {
    const auto start = Clock::now();
    const auto deadline = deadline_from(start);
    if (cfg_.world_size == 1) return ok_status();
    SDDP_CHECK(start_listening());
    if (is_root_) {
        owner_.assign(static_cast<std::size_t>(cfg_.world_size), 0);
        owner_[0] = kSelfOwner;
        known_ = 1;
    }
    if (serves_locals_) local_seen_.assign(static_cast<std::size_t>(cfg_.local_world_size), 0);
    // A node leader reaches rank 0 before serving its locals; they wait in the listen backlog.
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
    // Everyone is here: stop accepting, so late strangers get a refused connection.
    close_listeners();
    std::vector<std::uint64_t> stale(pending_.begin(), pending_.end());
    for (const std::uint64_t id : stale) remove_link(id);
    return wait_for_output(deadline, "the join");
}

void Node::turn_away_locals(const Error& why, Clock::time_point deadline) {
    // Without this the locals would retry the vanished leader until their own timeout and then
    // report only that they could not reach it. They start with the leader, so they are in the
    // backlog already or about to be: a short, bounded wait catches them.
    if (!local_listener_.valid()) return;
    const Bytes frame = wire::encode_abort(
        wire::Abort{static_cast<std::uint32_t>(why.code),
                    "the node leader, " + self_ + ", could not join: " + why.message});
    const auto until = std::min(deadline, Clock::now() + std::chrono::seconds(1));
    int told = 0;
    while (told < cfg_.local_world_size - 1 && Clock::now() < until) {
        pollfd p{local_listener_.get(), POLLIN, 0};
        if (::poll(&p, 1, poll_timeout_ms(until)) <= 0) continue;
        const int fd = ::accept4(local_listener_.get(), nullptr, nullptr, SOCK_CLOEXEC);
        if (fd < 0) continue;
        // A few hundred bytes into an empty socket buffer: one send, never blocks.
        (void)::send(fd, frame.data(), frame.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        ::close(fd);
        ++told;
    }
}

bool Node::join_complete() const {
    if (is_root_ && known_ < cfg_.world_size) return false;
    if (serves_locals_ && locals_joined_ < cfg_.local_world_size - 1) return false;
    return true;
}

std::string Node::describe_join_missing() const {
    if (is_root_ && known_ < cfg_.world_size) {
        std::vector<int> missing;
        for (std::size_t r = 0; r < owner_.size(); ++r) {
            if (owner_[r] == 0) missing.push_back(static_cast<int>(r));
        }
        std::string s = "waiting for " + std::to_string(missing.size()) + " of " +
                        std::to_string(cfg_.world_size) + " ranks to join rank 0 at " + master_ +
                        ": missing ranks " + format_rank_list(missing);
        std::string partial;
        int listed = 0;
        for (const Link* c : children_) {
            if (c->via_local || c->local_world_size <= 1) continue;
            if (c->locals_joined >= c->local_world_size - 1) continue;
            if (listed++ == 8) {
                partial += ", ...";
                break;
            }
            partial += (partial.empty() ? "" : ", ") + c->host + " (node leader rank " +
                       std::to_string(c->rank) + ", " + std::to_string(c->locals_joined + 1) +
                       " of " + std::to_string(c->local_world_size) + " local ranks joined)";
        }
        if (locals_joined_ < cfg_.local_world_size - 1) {
            partial += (partial.empty() ? "" : ", ") + host_ + " (rank 0's own node, " +
                       std::to_string(locals_joined_ + 1) + " of " +
                       std::to_string(cfg_.local_world_size) + " local ranks joined)";
        }
        if (!partial.empty()) s += "; incomplete nodes: " + partial;
        return s + ". Those ranks did not start, crashed, or cannot reach " + master_;
    }
    std::vector<int> missing;
    for (std::size_t l = 1; l < local_seen_.size(); ++l) {
        if (!local_seen_[l]) missing.push_back(static_cast<int>(l));
    }
    return "waiting for local ranks " + format_rank_list(missing) + " of node " +
           std::to_string(cfg_.node_rank) + " (" + std::to_string(cfg_.local_world_size) +
           " local ranks) to join their node leader; they did not start or crashed";
}

void Node::close_listeners() {
    for (Fd* fd : {&tcp_listener_, &local_listener_}) {
        if (fd->valid() && epoll_.valid())
            ::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, fd->get(), nullptr);
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
                if (l->valid()) ::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, l->get(), nullptr);
            }
            return;
        }
        log(self_ + ": accept failed: " + errno_text(err));
        return;
    }
}

void Node::admit(Fd fd, bool local) {
    if (pending_.size() >= max_pending_) {
        // Too many unauthenticated connections at once: drop this one; a real rank retries.
        ++shed_;
        return;
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
    link.handshake_deadline = Clock::now() + handshake_timeout_;
    next_expiry_ = std::min(next_expiry_, link.handshake_deadline);
    links_.emplace(id, std::move(owned));
    pending_.insert(id);
    send_to(link, std::make_shared<const Bytes>(
                      wire::encode_challenge(wire::Challenge{link.server_nonce})));
}

void Node::expire_handshakes(Clock::time_point now) {
    next_expiry_ = Clock::time_point::max();
    std::vector<std::uint64_t> expired;
    for (const std::uint64_t id : pending_) {
        Link* link = find(id);
        if (link == nullptr) continue;
        if (link->handshake_deadline <= now) {
            expired.push_back(id);
        } else {
            next_expiry_ = std::min(next_expiry_, link->handshake_deadline);
        }
    }
    for (const std::uint64_t id : expired) {
        Link* link = find(id);
        if (refusals_++ < kRefusalsLoggedInFull) {
            log(self_ + ": dropped " + link->conn.addr() + ": no valid hello within " +
                seconds_text(handshake_timeout_));
        }
        remove_link(id);
    }
}

void Node::refuse(Link& link, const std::string& reason) {
    if (refusals_++ < kRefusalsLoggedInFull || refusals_ % 1000 == 0) {
        log(self_ + ": refused a connection from " + link.conn.addr() + ": " + reason +
            (refusals_ > kRefusalsLoggedInFull ? " (" + std::to_string(refusals_) + " so far)"
                                               : ""));
    }
    // Best effort: a reject is tiny and the socket buffer empty, so one write sends it whole.
    link.conn.send(wire::encode_reject(wire::Reject{reason}));
    link.conn.flush();
    link.conn.shutdown_write();
    remove_link(link.id);
}

std::optional<std::string> Node::check_hello(const Link& link, const wire::Hello& h) const {
    const std::string tag = cfg_.step_tag.substr(0, wire::kMaxTagSize);
    if (h.step_tag != tag) {
        return "step tag mismatch: the peer belongs to step '" + h.step_tag + "', this is step '" +
               tag + "'";
    }
    // Only now, with the step confirmed, does the proof mean anything.
    if (!constant_time_equal(client_proof(cfg_.secret, link.server_nonce, h), h.mac)) {
        return "authentication failed: the peer does not hold this step's secret";
    }
    if (h.world_size != cfg_.world_size) {
        return "world size mismatch: the peer says " + std::to_string(h.world_size) + ", rank " +
               std::to_string(cfg_.rank) + " has " + std::to_string(cfg_.world_size);
    }
    if (h.rank < 0 || h.rank >= cfg_.world_size) {
        return "rank " + std::to_string(h.rank) + " is out of range for world size " +
               std::to_string(cfg_.world_size);
    }
    if (h.rank == cfg_.rank) return "rank " + std::to_string(h.rank) + " is this rank";
    if (link.via_local) {
        if (h.node_rank != cfg_.node_rank || h.local_world_size != cfg_.local_world_size ||
            h.local_rank < 1 || h.local_rank >= cfg_.local_world_size) {
            return "rank " + std::to_string(h.rank) + " (local rank " +
                   std::to_string(h.local_rank) + " of " + std::to_string(h.local_world_size) +
                   ", node " + std::to_string(h.node_rank) + ") does not belong to node " +
                   std::to_string(cfg_.node_rank) + " (" + std::to_string(cfg_.local_world_size) +
                   " local ranks)";
        }
        if (local_seen_[static_cast<std::size_t>(h.local_rank)]) {
            return "duplicate local rank " + std::to_string(h.local_rank) + " on node " +
                   std::to_string(cfg_.node_rank);
        }
        for (const Link* c : children_) {
            if (c->rank == h.rank) return "duplicate rank " + std::to_string(h.rank);
        }
        if (is_root_ && owner_[static_cast<std::size_t>(h.rank)] != 0) {
            return "duplicate rank " + std::to_string(h.rank);
        }
        return std::nullopt;
    }
    // Over TCP only node leaders (or every rank, without local information) reach rank 0.
    if (!is_root_) return "this rank does not accept TCP peers";
    if (h.local_world_size < 1 || h.local_rank != 0) {
        return "rank " + std::to_string(h.rank) + " is local rank " + std::to_string(h.local_rank) +
               " and must join through its node leader";
    }
    if (owner_[static_cast<std::size_t>(h.rank)] != 0) {
        return "duplicate rank " + std::to_string(h.rank) + ": it has already joined";
    }
    if (known_ + h.local_world_size > cfg_.world_size) {
        return "rank " + std::to_string(h.rank) + " leads " + std::to_string(h.local_world_size) +
               " local ranks, more than the " + std::to_string(cfg_.world_size - known_) +
               " still expected";
    }
    return std::nullopt;
}

bool Node::on_hello(Link& link, const OwnedFrame& frame) {
    Result<wire::Hello> hello = wire::decode_hello(frame.payload());
    if (!hello.ok()) {
        refuse(link, hello.error().message);
        return false;
    }
    if (std::optional<std::string> why = check_hello(link, *hello)) {
        refuse(link, *why);
        return false;
    }
    accept_child(link, *hello);
    return !failed_;
}

void Node::accept_child(Link& link, const wire::Hello& h) {
    pending_.erase(link.id);
    link.kind = Kind::child;
    link.rank = h.rank;
    link.local_rank = h.local_rank;
    link.local_world_size = h.local_world_size;
    link.node_rank = h.node_rank;
    link.host = h.host;
    children_.push_back(&link);
    wire::Welcome w;
    w.rank = cfg_.rank;
    w.host = host_;
    w.mac = server_proof(cfg_.secret, cfg_.step_tag.substr(0, wire::kMaxTagSize), h.client_nonce,
                         link.server_nonce, h.rank, cfg_.rank);
    send_to(link, std::make_shared<const Bytes>(wire::encode_welcome(w)));
    if (link.via_local) {
        local_seen_[static_cast<std::size_t>(h.local_rank)] = 1;
        ++locals_joined_;
    }
    if (is_root_) {
        owner_[static_cast<std::size_t>(h.rank)] = link.id;
        ++known_;
    } else if (parent_ != nullptr) {
        // Tell rank 0 at once, so that its view of who is missing stays exact.
        send_to(*parent_,
                std::make_shared<const Bytes>(wire::encode_joined(wire::Joined{{h.rank}})));
    }
}

void Node::on_joined(Link& link, const OwnedFrame& frame) {
    Result<wire::Joined> joined = wire::decode_joined(frame.payload());
    if (!joined.ok()) {
        fail(make_error(Errc::protocol,
                        self_ + ": " + describe(link) + ": " + joined.error().message),
             &link);
        return;
    }
    for (const std::int32_t r : joined->ranks) {
        const bool fits = !link.via_local && link.locals_joined < link.local_world_size - 1;
        if (r <= 0 || r >= cfg_.world_size || owner_[static_cast<std::size_t>(r)] != 0 || !fits) {
            fail(make_error(Errc::invalid_input,
                            self_ + ": node leader " + describe(link) + " reports rank " +
                                std::to_string(r) +
                                ", which is out of range, already joined elsewhere, or one more "
                                "than its local world size: are SLURM_LOCALID/SLURM_NODEID "
                                "consistent across the job?"),
                 &link);
            return;
        }
        owner_[static_cast<std::size_t>(r)] = link.id;
        ++link.locals_joined;
        ++known_;
    }
}

}  // namespace sddp::tcp
