// SPDX-License-Identifier: Apache-2.0
// Bogus peers against a real job: impostors, a fake root, garbage, silent and truncated
// clients, huge length fields, a connection flood. The real job must succeed every time, and
// each intruder must be refused for the right reason, promptly.
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "harness.hpp"
#include "os/hmac_sha256.hpp"
#include "rendezvous/protocol/wire.hpp"
#include "rendezvous/tcp/auth.hpp"
#include "rendezvous/tcp_transport.hpp"
#include "scenarios.hpp"

namespace sddp::mp {
namespace {

void send_all(int fd, const void* data, std::size_t n) {
    const auto* p = static_cast<const char*>(data);
    while (n > 0) {
        const ssize_t k = ::send(fd, p, n, MSG_NOSIGNAL);
        if (k <= 0) return;
        p += k;
        n -= static_cast<std::size_t>(k);
    }
}

void send_bytes(int fd, const Bytes& b) {
    send_all(fd, b.data(), b.size());
}

// Reads one frame with a deadline; nullopt on EOF/timeout/garbage.
std::optional<std::pair<wire::MsgType, Bytes>> read_frame(int fd, std::string& buf,
                                                          milliseconds limit) {
    const auto deadline = Clock::now() + limit;
    for (;;) {
        const auto* data = reinterpret_cast<const std::uint8_t*>(buf.data());
        Result<std::optional<wire::Frame>> f =
            wire::decode_frame({data, buf.size()}, wire::kMaxFramePayload);
        if (!f.ok()) return std::nullopt;
        if (*f) {
            std::pair<wire::MsgType, Bytes> out{(*f)->type,
                                                Bytes((*f)->payload.begin(), (*f)->payload.end())};
            buf.erase(0, (*f)->size);
            return out;
        }
        if (Clock::now() >= deadline) return std::nullopt;
        timeval tv{0, 50000};
        ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        char tmp[4096];
        const ssize_t n = ::recv(fd, tmp, sizeof tmp, 0);
        if (n == 0) return std::nullopt;
        if (n > 0) buf.append(tmp, static_cast<std::size_t>(n));
    }
}

// A hand-made client: answers the challenge with `hello` (its MAC computed with `secret`) and
// reports the server's verdict as {auth, reason} or {ok, "welcome"}.
Report raw_handshake(std::uint16_t port, wire::Hello hello, const std::string& secret) {
    const auto start = Clock::now();
    const int fd = connect_raw(port, milliseconds(10000));
    if (fd < 0) return report_error(make_error(Errc::io, "cannot connect"), start);
    std::string buf;
    auto ch = read_frame(fd, buf, milliseconds(10000));
    if (!ch || ch->first != wire::MsgType::challenge) {
        ::close(fd);
        return report_error(make_error(Errc::internal, "no challenge"), start);
    }
    Result<wire::Challenge> c = wire::decode_challenge(ch->second);
    hello.mac = tcp::client_proof(HmacKey(secret), c->server_nonce, hello);
    send_bytes(fd, wire::encode_hello(hello));
    auto reply = read_frame(fd, buf, milliseconds(10000));
    ::close(fd);
    if (!reply) return report_error(make_error(Errc::internal, "no reply to hello"), start);
    if (reply->first == wire::MsgType::reject) {
        Result<wire::Reject> rej = wire::decode_reject(reply->second);
        return report_error(make_error(Errc::auth, rej.ok() ? rej->reason : "?"), start);
    }
    Report r;
    r.code = 0;
    r.message = "welcome";
    return r;
}

wire::Hello hello_for(const Job& job, int rank) {
    const RendezvousConfig c = job.config(rank);
    wire::Hello h;
    h.rank = rank;
    h.world_size = job.world;
    h.local_rank = 0;
    h.local_world_size = 1;
    h.node_rank = 9;
    h.step_tag = job.step_tag;
    h.host = "intruder";
    return h;
}

// Events between the forked processes of a scenario, so that its order does not rest on sleeps.
// signal() writes one byte from any process; wait(n) takes n bytes, so several waiters may share
// one Latch as long as it is signalled once per waiter.
class Latch {
  public:
    Latch() {
        if (::pipe(fds_) != 0) {
            std::perror("pipe");
            std::abort();
        }
    }
    ~Latch() {
        ::close(fds_[0]);
        ::close(fds_[1]);
    }
    Latch(const Latch&) = delete;
    Latch& operator=(const Latch&) = delete;

    void signal(int times = 1) const {
        for (int k = 0; k < times; ++k) {
            const char c = 1;
            while (::write(fds_[1], &c, 1) < 0 && errno == EINTR) {
            }
        }
    }
    // False if fewer than `n` signals came within `limit`.
    bool wait(int n, milliseconds limit) const {
        const auto deadline = Clock::now() + limit;
        while (n > 0) {
            const auto left =
                std::chrono::duration_cast<milliseconds>(deadline - Clock::now()).count();
            if (left <= 0) return false;
            pollfd p{fds_[0], POLLIN, 0};
            if (::poll(&p, 1, static_cast<int>(left)) <= 0) continue;
            char c = 0;
            if (::read(fds_[0], &c, 1) == 1) --n;
        }
        return true;
    }

  private:
    int fds_[2] = {-1, -1};
};

// Generous bounds for the waits on events: they only stop a broken scenario from hanging.
constexpr milliseconds kEventLimit{20000};

std::size_t spawn_rank(Children& kids, const Job& job, int r, int rounds = 2) {
    return kids.spawn("rank " + std::to_string(r),
                      [&job, r, rounds] { return run_rank(job.config(r), rounds); });
}

// A real rank that starts only once `go` is signalled (once for it).
std::size_t spawn_rank_after(Children& kids, const Job& job, int r, const Latch& go,
                             int rounds = 2) {
    return kids.spawn("rank " + std::to_string(r), [&job, r, &go, rounds] {
        if (!go.wait(1, kEventLimit)) return Report{99, 0, "never let in"};
        return run_rank(job.config(r), rounds);
    });
}

// Runs in the parent: waits for `count` signals on `done`, then lets `late` ranks in through `go`.
// The late ranks are let in even if the wait fails, so that the scenario still ends.
void release_after(Checker& check, const Latch& done, int count, const Latch& go, int late,
                   const std::string& what) {
    check.expect(done.wait(count, kEventLimit), what + " before the rest of the job came");
    go.signal(late);
}

// Waits until rank 0 has admitted `rank` (a local rank, which joins through rank 0 itself). The
// probe claims the rank as the leader of more ranks than the world has, which rank 0 refuses
// whatever the rank's state: "duplicate rank R" once it has joined, another reason before.
std::optional<std::string> wait_until_joined(const Job& job, int rank) {
    const auto deadline = Clock::now() + kEventLimit;
    std::string last = "(no answer)";
    while (Clock::now() < deadline) {
        wire::Hello h = hello_for(job, rank);
        h.local_world_size = job.world + 1;
        const Report r = raw_handshake(job.port, h, job.secret);
        if (r.code == 0) return "the probe for rank " + std::to_string(rank) + " was welcomed";
        if (r.message.find("duplicate rank " + std::to_string(rank)) != std::string::npos) {
            return std::nullopt;
        }
        last = r.message;
        sleep_ms(10);
    }
    return "rank " + std::to_string(rank) + " never showed as joined; last answer: " + last;
}

int impostors() {
    Checker check{"impostors"};
    Job job = make_job("impostors", 4, 2, milliseconds(20000));
    Children kids(16);
    Latch done, go;
    // Node 1 (ranks 2 and 3) is let in only after every impostor has had its verdict, so that all
    // of them meet a rank 0 that still accepts.
    std::vector<std::size_t> real{spawn_rank(kids, job, 0), spawn_rank(kids, job, 1)};
    for (int r = 2; r < 4; ++r) real.push_back(spawn_rank_after(kids, job, r, go));
    int impostor_count = 0;
    auto raw = [&](const std::string& label, const std::function<void(wire::Hello&)>& tweak,
                   const std::string& secret, int after_joined = -1) {
        ++impostor_count;
        return kids.spawn(label, [&job, &done, tweak, secret, after_joined] {
            if (after_joined >= 0) {
                if (std::optional<std::string> why = wait_until_joined(job, after_joined)) {
                    done.signal();
                    return Report{static_cast<int>(Errc::internal), 0, *why};
                }
            }
            wire::Hello h = hello_for(job, 2);
            tweak(h);
            Report r = raw_handshake(job.port, h, secret);
            done.signal();
            return r;
        });
    };
    ++impostor_count;
    const std::size_t wrong_secret = kids.spawn("wrong-secret client", [&job, &done] {
        RendezvousConfig c = job.config(2);
        c.local_world_size = 1;  // a direct TCP client
        c.local_rank = 0;
        c.secret = "not the secret";
        c.timeout = milliseconds(10000);
        const auto start = Clock::now();
        Result<std::unique_ptr<Transport>> t = make_tcp_transport(c);
        done.signal();
        if (t.ok()) return Report{0, 0, "joined with a wrong secret!"};
        return report_error(t.error(), start);
    });
    const std::size_t wrong_tag = raw(
        "wrong step tag", [](wire::Hello& h) { h.step_tag = "other.step"; }, job.secret);
    const std::size_t wrong_world = raw(
        "wrong world size", [](wire::Hello& h) { h.world_size = 5; }, job.secret);
    const std::size_t out_of_range = raw(
        "out-of-range rank", [](wire::Hello& h) { h.rank = 9; }, job.secret);
    const std::size_t negative = raw(
        "negative rank", [](wire::Hello& h) { h.rank = -1; }, job.secret);
    // Claims rank 1 after the real rank 1 has joined (without that wait it could come first and be
    // welcomed, and the real one refused).
    const std::size_t duplicate = raw(
        "duplicate rank", [](wire::Hello& h) { h.rank = 1; }, job.secret, 1);
    const std::size_t self = raw(
        "claims rank 0", [](wire::Hello& h) { h.rank = 0; }, job.secret);
    const std::size_t not_leader = raw(
        "local rank over TCP",
        [](wire::Hello& h) {
            h.rank = 3;
            h.local_rank = 1;
            h.local_world_size = 2;
        },
        job.secret);
    release_after(check, done, impostor_count, go, 2, "every impostor had its verdict");
    check.expect(kids.wait_all(milliseconds(40000)), "no process hangs");
    for (const std::size_t i : real) check.expect_ok(kids, i);
    check.expect_error(kids, wrong_secret, Errc::auth, {"refused rank 2", "authentication failed"});
    check.expect_error(kids, wrong_tag, Errc::auth, {"step tag mismatch"});
    check.expect_error(kids, wrong_world, Errc::auth, {"world size mismatch"});
    check.expect_error(kids, out_of_range, Errc::auth, {"rank 9 is out of range"});
    check.expect_error(kids, negative, Errc::auth, {"rank -1 is out of range"});
    check.expect_error(kids, duplicate, Errc::auth, {"duplicate rank 1"});
    check.expect_error(kids, self, Errc::auth, {"rank 0 is this rank"});
    check.expect_error(kids, not_leader, Errc::auth, {"must join through its node leader"});
    return check.failures;
}

// A process on the master port that does not know the secret but welcomes everyone. Its
// welcome proves nothing, so the victim does not join it; it keeps trying to its deadline (the
// port could be rank 0's a moment later) and then names what it met.
int fake_root() {
    Checker check{"fake_root"};
    Job job = make_job("fake_root", 2, 2, milliseconds(3000));
    Children kids(4);
    Latch listening;
    kids.spawn("fake root", [&job, &listening] {
        const int lfd = ::socket(AF_INET, SOCK_STREAM, 0);
        const int one = 1;
        ::setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons(job.port);
        ::bind(lfd, reinterpret_cast<sockaddr*>(&a), sizeof a);
        ::listen(lfd, 16);
        listening.signal();
        const int fd = ::accept(lfd, nullptr, nullptr);
        send_bytes(fd, wire::encode_challenge(wire::Challenge{}));
        std::string buf;
        auto hello = read_frame(fd, buf, milliseconds(10000));
        wire::Welcome w;  // all-zero MAC: it cannot compute the real one
        w.rank = 0;
        w.host = "fake";
        send_bytes(fd, wire::encode_welcome(w));
        sleep_ms(500);
        ::close(fd);
        ::close(lfd);
        return Report{0, 0, hello ? "got hello" : "no hello"};
    });
    const std::size_t victim = spawn_rank_after(kids, job, 1, listening, 1);
    check.expect(kids.wait_all(milliseconds(20000)), "no process hangs");
    check.expect_error(kids, victim, Errc::auth,
                       {"rank 0 at 127.0.0.1:" + std::to_string(job.port), "welcomed rank 1",
                        "could not prove it holds this step's secret"});
    check.expect_under(kids, victim, 4.5);
    return check.failures;
}

// What a raw client heard: the reason of the server's reject, if it sent one.
std::string reject_reason(const std::string& got) {
    std::string buf = got;
    for (;;) {
        const auto* data = reinterpret_cast<const std::uint8_t*>(buf.data());
        Result<std::optional<wire::Frame>> f =
            wire::decode_frame({data, buf.size()}, wire::kMaxFramePayload);
        if (!f.ok() || !*f) return "(no reject; " + std::to_string(got.size()) + " bytes)";
        if ((*f)->type == wire::MsgType::reject) {
            Result<wire::Reject> r = wire::decode_reject((*f)->payload);
            return r.ok() ? r->reason : "(malformed reject)";
        }
        buf.erase(0, (*f)->size);
    }
}

int garbage() {
    Checker check{"garbage"};
    // A 10 s timeout gives a 5 s handshake deadline: "at once" below means well before it.
    Job job = make_job("garbage", 4, 2, milliseconds(10000));
    Children kids(16);
    Latch done, go;
    // Ranks 1-3 come only after every junk client is done, so all of them meet a rank 0 that
    // still accepts.
    std::vector<std::size_t> real{spawn_rank(kids, job, 0)};
    for (int r = 1; r < 4; ++r) real.push_back(spawn_rank_after(kids, job, r, go));
    auto junk = [&](const std::string& label, std::string bytes) {
        return kids.spawn(label, [&job, &done, bytes] {
            const int fd = connect_raw(job.port, milliseconds(10000));
            const auto start = Clock::now();
            send_all(fd, bytes.data(), bytes.size());
            auto [got, eof] = read_until_eof(fd, milliseconds(10000));
            ::close(fd);
            done.signal();
            return report_error(
                make_error(eof ? Errc::protocol : Errc::timeout, reject_reason(got)), start);
        });
    };
    const std::size_t http = junk("http client", "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    std::string bin(300, '\0');
    for (std::size_t i = 0; i < bin.size(); ++i) bin[i] = static_cast<char>((i * 131) & 0xff);
    const std::size_t binary = junk("binary garbage", bin);
    const std::size_t bad_version =
        junk("wrong version", std::string("SDDP\x07\x02\0\0\0\0\0\x04", 12));
    const std::size_t scanner = kids.spawn("port scanner", [&job, &done] {
        int reached = 0;
        for (int i = 0; i < 50; ++i) {
            const int fd = connect_raw(job.port, milliseconds(10000));
            if (fd < 0) continue;
            ::close(fd);
            ++reached;
        }
        done.signal();
        return Report{reached == 50 ? 0 : 1, 0, std::to_string(reached) + " of 50 connects"};
    });
    release_after(check, done, 4, go, 3, "every junk client was answered");
    check.expect(kids.wait_all(milliseconds(40000)), "no process hangs");
    for (const std::size_t i : real) check.expect_ok(kids, i);
    // Refused on the bad header itself, not dropped at the 5 s handshake deadline.
    check.expect_error(kids, http, Errc::protocol, {"bad magic"});
    check.expect_under(kids, http, 2.5);
    check.expect_error(kids, binary, Errc::protocol, {"bad magic"});
    check.expect_under(kids, binary, 2.5);
    check.expect_error(kids, bad_version, Errc::protocol, {"protocol v7, this library v3"});
    check.expect_under(kids, bad_version, 2.5);
    check.expect_ok(kids, scanner);
    return check.failures;
}

// Connects, maybe sends `bytes`, then stays silent; reports when the server hangs up, then
// signals `done`.
std::size_t silent_client(Children& kids, const Job& job, const std::string& label,
                          std::string bytes, const Latch& done) {
    return kids.spawn(label, [&job, &done, bytes] {
        const int fd = connect_raw(job.port, milliseconds(10000));
        const auto start = Clock::now();
        if (!bytes.empty()) send_all(fd, bytes.data(), bytes.size());
        auto [got, eof] = read_until_eof(fd, milliseconds(15000));
        ::close(fd);
        done.signal();
        if (!eof) return report_error(make_error(Errc::timeout, "never dropped"), start);
        return report_error(make_error(Errc::protocol, reject_reason(got)), start);
    });
}

// Time is what these check: a client that stalls in the handshake is dropped at the handshake
// deadline, half the job's timeout. With a 6 s timeout that is 3 s after rank 0 accepted it
// (which is after the client's connect returned, so never sooner); the upper margin absorbs a
// slow event loop under TSan on two cores.
constexpr double kDeadlineLow = 2.5, kDeadlineHigh = 5.0;

int slowloris() {
    Checker check{"slowloris"};
    // The rest of the job is let in only after both silent clients were dropped: they can only
    // have been dropped by their own deadline, not by the end of the join.
    Job job = make_job("slowloris", 4, 2, milliseconds(6000));
    Children kids(8);
    Latch done, go;
    std::vector<std::size_t> real{spawn_rank(kids, job, 0)};
    const std::size_t silent = silent_client(kids, job, "silent client", "", done);
    const std::size_t dribble = silent_client(kids, job, "partial header", "SDD", done);
    for (int r = 1; r < 4; ++r) real.push_back(spawn_rank_after(kids, job, r, go));
    release_after(check, done, 2, go, 3, "both silent clients were dropped");
    check.expect(kids.wait_all(milliseconds(30000)), "no process hangs");
    for (const std::size_t i : real) check.expect_ok(kids, i);
    for (const std::size_t i : {silent, dribble}) {
        check.expect(kids.report(i).code == static_cast<int>(Errc::protocol),
                     kids.label(i) + " should be dropped, got: " + kids.report(i).message);
        check.expect(
            kids.report(i).seconds >= kDeadlineLow && kids.report(i).seconds <= kDeadlineHigh,
            kids.label(i) + " dropped after " + std::to_string(kids.report(i).seconds) +
                " s, expected about 3 s");
    }
    return check.failures;
}

std::string header(wire::MsgType type, std::uint32_t len) {
    std::string h = "SDDP";
    h += static_cast<char>(wire::kVersion);
    h += static_cast<char>(type);
    h += std::string(2, '\0');
    for (int s = 24; s >= 0; s -= 8) h += static_cast<char>((len >> s) & 0xff);
    return h;
}

int truncated() {
    Checker check{"truncated"};
    Job job = make_job("truncated", 2, 2, milliseconds(6000));
    Children kids(8);
    Latch done, go;
    std::vector<std::size_t> real{spawn_rank(kids, job, 0)};
    // Promises 200 bytes, sends 20, waits: dropped at the handshake deadline.
    const std::size_t short_body = silent_client(
        kids, job, "short body", header(wire::MsgType::hello, 200) + std::string(20, 'x'), done);
    // A complete frame whose payload is too short to be a hello: refused at once.
    const std::size_t bad_body =
        silent_client(kids, job, "truncated hello",
                      header(wire::MsgType::hello, 10) + std::string(10, 'x'), done);
    const std::size_t half = kids.spawn("half header then close", [&job, &done] {
        const int fd = connect_raw(job.port, milliseconds(10000));
        send_all(fd, "SDDP\x01", 5);
        ::close(fd);
        done.signal();
        return Report{fd >= 0 ? 0 : 1, 0, fd >= 0 ? "" : "cannot connect"};
    });
    // Rank 1 comes after all three, so rank 0 was still accepting for each of them.
    real.push_back(spawn_rank_after(kids, job, 1, go));
    release_after(check, done, 3, go, 1, "all three truncated clients were done");
    check.expect(kids.wait_all(milliseconds(30000)), "no process hangs");
    for (const std::size_t i : real) check.expect_ok(kids, i);
    check.expect(kids.report(short_body).code == static_cast<int>(Errc::protocol) &&
                     kids.report(short_body).seconds >= kDeadlineLow &&
                     kids.report(short_body).seconds <= kDeadlineHigh,
                 "short body dropped at the handshake deadline (" +
                     std::to_string(kids.report(short_body).seconds) + " s)");
    check.expect_error(kids, bad_body, Errc::protocol, {"truncated"});
    check.expect_under(kids, bad_body, 1.5);  // at once: half the 3 s deadline
    check.expect_ok(kids, half);
    return check.failures;
}

int huge_length() {
    Checker check{"huge_length"};
    // A 10 s timeout gives a 5 s handshake deadline: "at once" below means well before it.
    Job job = make_job("huge_length", 2, 2, milliseconds(10000));
    Children kids(8);
    Latch done, go;
    std::vector<std::size_t> real{spawn_rank(kids, job, 0), spawn_rank_after(kids, job, 1, go)};
    const std::size_t huge =
        silent_client(kids, job, "4 GiB length", header(wire::MsgType::hello, 0xFFFFFFFFu), done);
    const std::size_t big =
        silent_client(kids, job, "5000-byte hello", header(wire::MsgType::hello, 5000), done);
    const std::size_t big_up = silent_client(kids, job, "200 MiB up before auth",
                                             header(wire::MsgType::up, 200u << 20), done);
    release_after(check, done, 3, go, 1, "all three oversized headers were answered");
    check.expect(kids.wait_all(milliseconds(30000)), "no process hangs");
    for (const std::size_t i : real) check.expect_ok(kids, i);
    for (const std::size_t i : {huge, big, big_up}) {
        check.expect_error(kids, i, Errc::protocol, {"exceeds the 4096-byte limit"});
        check.expect_under(kids, i, 2.5);
    }
    return check.failures;
}

int flood() {
    Checker check{"flood"};
    // A 12 s timeout gives the 5 s maximum handshake deadline: the attacker's silent connections
    // hold their slots that long, so real ranks joining well under it were not made to wait for
    // them.
    Job job = make_job("flood", 16, 4, milliseconds(12000));
    Children kids(24);
    Latch flooding, go;
    constexpr int kBeforeJob = 100;  // connections made before the real ranks come
    std::vector<std::size_t> real{spawn_rank(kids, job, 0)};
    const std::size_t attacker = kids.spawn("attacker", [&job, &flooding] {
        std::vector<int> held;
        int made = 0;
        for (int i = 0; i < 300; ++i) {
            // Once the job has joined, rank 0 stops listening: then the flood is over.
            const int fd = connect_raw(job.port, milliseconds(i == 0 ? 10000 : 100));
            if (fd < 0) break;
            if (++made == kBeforeJob) flooding.signal();
            if (i % 3 == 0) {
                held.push_back(fd);  // silent
            } else if (i % 3 == 1) {
                send_all(fd, "garbage garbage garbage", 23);
                held.push_back(fd);
            } else {
                ::close(fd);  // scanner
            }
        }
        if (made < kBeforeJob) flooding.signal();
        sleep_ms(3000);  // hold the silent ones a while after the job
        for (const int fd : held) ::close(fd);
        return Report{made >= kBeforeJob ? 0 : 1, 0, std::to_string(made) + " connections"};
    });
    for (int r = 1; r < 16; ++r) real.push_back(spawn_rank_after(kids, job, r, go));
    release_after(check, flooding, 1, go, 15, "the flood was under way");
    check.expect(kids.wait_all(milliseconds(40000)), "no process hangs");
    for (const std::size_t i : real) {
        check.expect_ok(kids, i);
        check.expect_under(kids, i, 4.0);
    }
    check.expect_ok(kids, attacker);
    return check.failures;
}

}  // namespace

std::vector<Scenario> intruder_scenarios() {
    return {
        {"impostors", impostors}, {"fake_root", fake_root}, {"garbage", garbage},
        {"slowloris", slowloris}, {"truncated", truncated}, {"huge_length", huge_length},
        {"flood", flood},
    };
}

}  // namespace sddp::mp
