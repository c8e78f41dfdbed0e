// SPDX-License-Identifier: Apache-2.0
#include "rendezvous/tcp/join_parent.hpp"

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <random>
#include <thread>
#include <variant>

#include "core/contract/contract.hpp"
#include "os/hmac_sha256.hpp"
#include "rendezvous/protocol/join_pacing.hpp"
#include "rendezvous/tcp/auth.hpp"

namespace sddp::tcp {
namespace {

using std::chrono::milliseconds;

// One connect and handshake may take this long before the client drops it and tries again. A
// real parent sends its challenge as soon as it accepts and answers a hello within one turn of
// its loop (milliseconds, a second or two in a join storm); it drops a client that stays silent
// after 5 s (its handshake deadline). A peer that accepts and then says nothing (a squatter,
// a hung process) therefore costs one attempt, not the whole join deadline.
constexpr Clock::duration kAttemptLimit = std::chrono::seconds(5);

// Why one attempt ended: `retry` means try again after a pause; otherwise `error` is final.
struct Attempt {
    bool retry = false;
    std::string why;  // for the final timeout message when retries run out
    std::optional<Error> error;
    std::optional<ParentLink> link;
    // What the peer answered without proving it holds the secret (a reject, an abort, a welcome
    // with a wrong proof, bytes that are not this protocol): anyone on the port could send it,
    // so it is retried, and reported (its code, "<parent> <message>") if time runs out.
    std::optional<Error> unproven;
};

Attempt unproven(Errc code, std::string heard) {
    Attempt a;
    a.retry = true;
    a.why = heard;
    a.unproven = make_error(code, std::move(heard));
    return a;
}

// Waits until `fd` is ready for `events` or `until`: the caller's loop when it gave one, else
// poll(2). The revents, 0 at `until`.
short wait_ready(const JoinWait& wait, int fd, short events, Clock::time_point until) {
    if (wait.idle) return wait.idle(fd, events, until);
    pollfd p{fd, events, 0};
    for (;;) {
        const int n = ::poll(&p, 1, poll_timeout_ms(until));
        if (n < 0 && errno == EINTR) continue;
        return n > 0 ? p.revents : static_cast<short>(n < 0 ? POLLERR : 0);
    }
}

// Waits for one whole frame from a handshake peer. EOF returns nullopt with *eof set.
Result<std::optional<OwnedFrame>> read_frame(Connection& c, Clock::time_point deadline, bool* eof,
                                             const JoinWait& wait) {
    for (;;) {
        Result<std::optional<OwnedFrame>> f = c.next_frame(wire::kMaxHandshakePayload);
        if (!f.ok() || f->has_value()) return f;  // an error or a whole frame
        if (c.eof()) {
            *eof = true;
            return std::optional<OwnedFrame>();
        }
        if (wait_ready(wait, c.fd(), POLLIN, deadline) == 0) {
            return std::optional<OwnedFrame>();  // deadline; caller checks the clock
        }
        c.read_available(wire::kHeaderSize + wire::kMaxHandshakePayload);
    }
}

bool retryable_connect_error(int err) {
    switch (err) {
        case ECONNREFUSED:  // not listening yet
        case ENOENT:        // local socket not bound yet
        case EAGAIN:        // local socket backlog full
        case ETIMEDOUT:
        case ECONNRESET:
        case ECONNABORTED:
        case ENETUNREACH:
        case EHOSTUNREACH:
        case EINTR:
        case EMFILE:
        case ENFILE:
        case ENOBUFS:
            return true;
        default:
            return false;
    }
}

// Why the last attempt failed, for the message when time runs out. A refused connect is the
// common miss (the parent is not listening yet): its errno is kept and turned into text only
// then, since strerror's locale look-up costs a fresh rank more than the connect did.
class LastMiss {
  public:
    void set(std::string why) {
        why_ = std::move(why);
        errno_ = 0;
    }
    void set_errno(int err) { errno_ = err; }
    std::string text() const { return errno_ != 0 ? errno_text(errno_) : why_; }

  private:
    std::string why_ = "no attempt finished";
    int errno_ = 0;
};

Attempt retry_because(std::string why) {
    Attempt a;
    a.retry = true;
    a.why = std::move(why);
    return a;
}

// The server's challenge, or how this attempt ends without one.
std::variant<wire::Challenge, Attempt> await_challenge(Connection& conn, Clock::time_point deadline,
                                                       const JoinWait& wait) {
    const auto attempt_start = Clock::now();
    bool eof = false;
    Result<std::optional<OwnedFrame>> ch = read_frame(conn, deadline, &eof, wait);
    if (!ch.ok()) {
        return unproven(Errc::protocol, "does not speak this sddp rendezvous protocol (" +
                                            ch.error().message + ")");
    }
    if (!*ch) {
        // Closed before the challenge: the server shed load or is restarting. Try again.
        const auto waited =
            std::chrono::duration_cast<milliseconds>(Clock::now() - attempt_start).count();
        return retry_because(eof ? "connection closed before the challenge"
                                 : "accepted the connection but sent no challenge in " +
                                       std::to_string(waited) + " ms");
    }
    if ((*ch)->type == wire::MsgType::abort) {
        // A parent that gives up before serving us tells us why only after the handshake
        // (sealed); an abort in place of the challenge comes from someone else on the port.
        Result<wire::Abort> ab = wire::decode_abort((*ch)->payload());
        return unproven(
            Errc::auth,
            "sent an abort (" +
                (ab.ok() ? wire::printable(ab->reason, 200) : std::string("unreadable")) + ")");
    }
    if ((*ch)->type != wire::MsgType::challenge) {
        return unproven(Errc::protocol, "sent an unexpected first message (type " +
                                            std::to_string(static_cast<int>((*ch)->type)) + ")");
    }
    Result<wire::Challenge> challenge = wire::decode_challenge((*ch)->payload());
    if (!challenge.ok()) {
        return unproven(Errc::protocol,
                        "sent an invalid challenge (" + challenge.error().message + ")");
    }
    return *challenge;
}

wire::Hello make_hello(const RendezvousConfig& cfg, const HmacKey& secret, const std::string& host,
                       const wire::Nonce& client_nonce, const wire::Challenge& challenge) {
    wire::Hello hello;
    hello.rank = cfg.rank;
    hello.world_size = cfg.world_size;
    hello.local_rank = cfg.local_rank;
    hello.local_world_size = cfg.local_world_size;
    hello.node_rank = cfg.node_rank;
    hello.step_tag = wire_tag(cfg);
    hello.host = host.substr(0, wire::kMaxHostSize);
    hello.client_nonce = client_nonce;
    hello.mac = client_proof(secret, challenge.server_nonce, hello);
    return hello;
}

// A refusal counts only with the server's proof: anyone on the port could send one.
Attempt refused(const OwnedFrame& frame, const ParentTarget& target, const RendezvousConfig& cfg,
                const HmacKey& secret, const wire::Hello& hello, const wire::Challenge& challenge) {
    Result<wire::Reject> rej = wire::decode_reject(frame.payload());
    if (!rej.ok() || !constant_time_equal(reject_proof(secret, hello.step_tag, hello.client_nonce,
                                                       challenge.server_nonce, rej->reason),
                                          rej->mac)) {
        return unproven(Errc::auth,
                        "refused rank " + std::to_string(cfg.rank) + " (" +
                            (rej.ok() ? wire::printable(rej->reason, wire::kMaxReasonSize)
                                      : std::string("an unreadable refusal")) +
                            ")");
    }
    Attempt a;
    a.error = make_error(
        Errc::auth,
        target.description + " refused rank " + std::to_string(cfg.rank) + ": " +
            (rej.ok() ? wire::printable(rej->reason, wire::kMaxReasonSize) : "no reason given"));
    return a;
}

// A welcome with the server's proof ends the handshake: the connection is sealed from here on.
Attempt welcomed(Connection& conn, const OwnedFrame& frame, const RendezvousConfig& cfg,
                 const HmacKey& secret, const wire::Hello& hello,
                 const wire::Challenge& challenge) {
    Result<wire::Welcome> welcome = wire::decode_welcome(frame.payload());
    if (!welcome.ok()) {
        return unproven(Errc::protocol,
                        "sent an invalid welcome (" + welcome.error().message + ")");
    }
    const wire::Mac expect =
        server_proof(secret, hello.step_tag, hello.client_nonce, challenge.server_nonce, cfg.rank,
                     welcome->rank, welcome->host);
    if (!constant_time_equal(expect, welcome->mac)) {
        return unproven(Errc::auth, "welcomed rank " + std::to_string(cfg.rank));
    }
    conn.seal(session_key(secret, hello.step_tag, hello.client_nonce, challenge.server_nonce),
              true);
    ParentLink link;
    link.rank = welcome->rank;
    link.host = wire::printable(welcome->host, wire::kMaxHostSize);
    Attempt a;
    a.link = std::move(link);
    return a;
}

// Sends the hello and reads what the server makes of it.
Attempt answer_challenge(Connection& conn, const ParentTarget& target, const RendezvousConfig& cfg,
                         const HmacKey& secret, const wire::Hello& hello,
                         const wire::Challenge& challenge, Clock::time_point deadline,
                         const JoinWait& wait) {
    conn.send(wire::encode_hello(hello));
    // A hello is far smaller than any socket buffer: one flush sends it whole.
    conn.flush();
    if (conn.broken()) {
        return retry_because("connection lost while sending the hello: " +
                             errno_text(conn.last_errno()));
    }
    bool eof = false;
    Result<std::optional<OwnedFrame>> reply = read_frame(conn, deadline, &eof, wait);
    if (!reply.ok()) {
        return unproven(Errc::protocol,
                        "answered the hello with something that is not this sddp "
                        "rendezvous protocol (" +
                            reply.error().message + ")");
    }
    if (!*reply) {
        return retry_because(eof ? "connection closed during the handshake"
                                 : "no answer to the hello");
    }
    if ((*reply)->type == wire::MsgType::reject)
        return refused(**reply, target, cfg, secret, hello, challenge);
    if ((*reply)->type != wire::MsgType::welcome) {
        return unproven(Errc::protocol, "answered the hello with an unexpected message (type " +
                                            std::to_string(static_cast<int>((*reply)->type)) + ")");
    }
    return welcomed(conn, **reply, cfg, secret, hello, challenge);
}

// The client's side of the handshake (auth.hpp): challenge in, hello out, verdict in.
Attempt handshake(Connection& conn, const ParentTarget& target, const RendezvousConfig& cfg,
                  const HmacKey& secret, const std::string& host, Clock::time_point deadline,
                  const JoinWait& wait) {
    std::variant<wire::Challenge, Attempt> got = await_challenge(conn, deadline, wait);
    if (Attempt* ended = std::get_if<Attempt>(&got)) return std::move(*ended);
    const wire::Challenge& challenge = std::get<wire::Challenge>(got);
    Result<wire::Nonce> nonce = make_nonce();
    if (!nonce.ok()) {
        Attempt a;
        a.error = nonce.error();
        return a;
    }
    const wire::Hello hello = make_hello(cfg, secret, host, *nonce, challenge);
    return answer_challenge(conn, target, cfg, secret, hello, challenge, deadline, wait);
}

}  // namespace

Result<ParentLink> join_parent(const ParentTarget& target, const RendezvousConfig& cfg,
                               const HmacKey& secret, const std::string& host,
                               Clock::time_point deadline, const JoinWait& wait) {
    const auto start = Clock::now();
    auto stop_error = [&] {
        return make_error(Errc::peer_lost, "rank " + std::to_string(cfg.rank) +
                                               " stopped joining " + target.description +
                                               ": it failed meanwhile");
    };
    std::minstd_rand jitter(
        static_cast<unsigned>(std::hash<std::string>{}(host) ^ static_cast<unsigned>(cfg.rank) ^
                              static_cast<unsigned>(start.time_since_epoch().count())));
    // Start at 1 ms (a node leader's locals at 250 us: a refused Unix connect costs a few
    // microseconds): the common miss is a parent a few milliseconds from listen(), and a refused
    // connect costs the parent nothing. Doubling reaches the 1 s cap within ten misses, so a
    // parent that is really late (or a SYN-dropping backlog) is not hammered; retry_pause keeps
    // each pause within a quarter of the time waited so far, so a parent that comes late is
    // found soon after it listens.
    const std::chrono::microseconds first(target.local ? 250 : 1000);
    std::chrono::microseconds backoff = first;
    LastMiss last_miss;
    std::vector<SocketAddress> addrs;
    // A node leader binds its local socket before anything else, and a leader that gives up
    // tells its waiting locals why. So once a connect to it has succeeded, a refused one means
    // the listener is gone with its process: say so now rather than retry to the timeout.
    bool reached_leader = false;
    std::optional<Error> unproven_answer;
    // The first kMinJoinBatch leaders never wait, whatever the backlog: only a later one reads
    // it.
    if (!target.local && target.pace_index >= kMinJoinBatch) {
        const auto pace = join_delay(target.pace_index, accept_backlog());
        if (pace.count() > 0) {
            std::this_thread::sleep_for(std::min<Clock::duration>(pace, deadline - start));
        }
    }
    for (;;) {
        if (wait.stopped && wait.stopped()) return stop_error();
        if (target.local) {
            addrs = {abstract_address(target.local_name)};
        } else if (addrs.empty()) {
            Result<std::vector<SocketAddress>> r = resolve_tcp(target.host, target.port, deadline);
            if (r.ok()) {
                addrs = std::move(*r);
            } else if (r.error().code == Errc::timeout) {
                return make_error(Errc::timeout, "rank " + std::to_string(cfg.rank) +
                                                     " cannot reach " + target.description + ": " +
                                                     r.error().message);
            } else {
                last_miss.set(r.error().message);  // DNS may not be ready yet on a fresh node
            }
        }
        for (const SocketAddress& to : addrs) {
            // One attempt may not eat the whole budget: a dropped SYN or a silent peer must
            // leave time to retry.
            const auto attempt_deadline = std::min(deadline, Clock::now() + kAttemptLimit);
            ConnectOutcome c = connect_until(to, attempt_deadline);
            if (!c.fd.valid() && target.local && reached_leader && c.err == ECONNREFUSED) {
                return make_error(Errc::peer_lost,
                                  "rank " + std::to_string(cfg.rank) + ": " + target.description +
                                      " stopped listening before the join finished: it exited "
                                      "or was killed (see its log)");
            }
            if (!c.fd.valid()) {
                if (!retryable_connect_error(c.err)) {
                    return make_error(Errc::io, "rank " + std::to_string(cfg.rank) +
                                                    " cannot connect to " + target.description +
                                                    ": " + errno_text(c.err));
                }
                last_miss.set_errno(c.err);
                continue;
            }
            if (target.local) {
                // Before any byte goes out: the node leader runs as our user, and a hello sent
                // to anyone else would hand them this rank's identity and a proof to relay.
                if (std::optional<std::string> foreign = foreign_local_peer(c.fd.get())) {
                    Attempt a = unproven(Errc::auth,
                                         "is held by another user's process, not the "
                                         "node leader: " +
                                             *foreign);
                    unproven_answer = a.unproven;
                    last_miss.set(a.why);
                    continue;
                }
            }
            reached_leader = reached_leader || target.local;
            Connection conn(std::move(c.fd), to.text);
            Attempt a = handshake(conn, target, cfg, secret, host, attempt_deadline, wait);
            if (a.error) return std::move(*a.error);
            if (a.link) {
                a.link->conn = std::make_unique<Connection>(std::move(conn));
                return std::move(*a.link);
            }
            if (a.unproven) unproven_answer = a.unproven;
            last_miss.set(a.why);
        }
        const auto now = Clock::now();
        if (now >= deadline) break;
        // Exponential backoff with +-50% jitter so thousands of ranks do not retry in lockstep.
        std::uniform_real_distribution<double> spread(0.5, 1.5);
        const auto waited = std::chrono::duration_cast<std::chrono::microseconds>(now - start);
        const auto pause = std::chrono::duration_cast<std::chrono::microseconds>(
            retry_pause(backoff, waited, first) * spread(jitter));
        if (wait.idle) {
            (void)wait.idle(-1, 0, std::min<Clock::time_point>(deadline, now + pause));
        } else {
            std::this_thread::sleep_for(std::min<Clock::duration>(pause, deadline - now));
        }
        if (wait.stopped && wait.stopped()) return stop_error();
        // A node leader serves a handful of locals and a refused Unix connect costs it nothing:
        // keep their retries short so they are not asleep when it starts listening. Rank 0
        // serves thousands of leaders over TCP: back off to a second there.
        backoff = std::min<std::chrono::microseconds>(
            backoff * 2, target.local ? milliseconds(8) : milliseconds(1000));
        if (Clock::now() >= deadline) break;
    }
    const double waited = std::chrono::duration<double>(Clock::now() - start).count();
    char secs[32];
    (void)std::snprintf(secs, sizeof secs, "%.1f", waited);
    if (unproven_answer) {
        return make_error(
            unproven_answer->code,
            "rank " + std::to_string(cfg.rank) + ": " + target.description + " " +
                unproven_answer->message +
                " but could not prove it holds this step's secret, so rank " +
                std::to_string(cfg.rank) + " did not act on it and kept trying for " + secs +
                " s. Something else holds the port (another process listening on the master "
                "port), or rank 0 runs with a different " +
                std::string(contract::kSecretVar) + " or slurm-ddp version than this rank");
    }
    return make_error(Errc::timeout,
                      "rank " + std::to_string(cfg.rank) + " could not reach " +
                          target.description + " within " + secs +
                          " s (last error: " + last_miss.text() +
                          "); is rank 0 running, and are MASTER_ADDR and the port (--ddp=port=N "
                          "or MASTER_PORT) the same on every rank?");
}

}  // namespace sddp::tcp
