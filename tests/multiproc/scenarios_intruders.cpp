// Bogus peers against a real job: impostors, a fake root, garbage, silent and truncated
// clients, huge length fields, a connection flood. The real job must succeed every time, and
// each intruder must be refused for the right reason, promptly.
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstdio>
#include <cstring>

#include "core/hmac_sha256.hpp"
#include "core/wire.hpp"
#include "harness.hpp"
#include "rendezvous/tcp_auth.hpp"
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
    const int fd = connect_raw(port, milliseconds(3000));
    if (fd < 0) return report_error(make_error(Errc::io, "cannot connect"), start);
    std::string buf;
    auto ch = read_frame(fd, buf, milliseconds(2000));
    if (!ch || ch->first != wire::MsgType::challenge) {
        ::close(fd);
        return report_error(make_error(Errc::internal, "no challenge"), start);
    }
    Result<wire::Challenge> c = wire::decode_challenge(ch->second);
    hello.mac = tcp::client_proof(secret, c->server_nonce, hello);
    send_bytes(fd, wire::encode_hello(hello));
    auto reply = read_frame(fd, buf, milliseconds(2000));
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

std::size_t spawn_rank(Children& kids, const Job& job, int r, int delay_ms, int rounds = 2) {
    return kids.spawn("rank " + std::to_string(r), [&job, r, delay_ms, rounds] {
        sleep_ms(delay_ms);
        return run_rank(job.config(r), rounds);
    });
}

int impostors() {
    Checker check{"impostors"};
    Job job = make_job("impostors", 4, 2, milliseconds(8000));
    Children kids(16);
    // Ranks 2 and 3 come late so the impostors arrive while rank 0 still accepts.
    std::vector<std::size_t> real;
    for (int r = 0; r < 4; ++r) real.push_back(spawn_rank(kids, job, r, r < 2 ? 0 : 1500));
    auto raw = [&](const std::string& label, std::function<void(wire::Hello&)> tweak,
                   std::string secret) {
        return kids.spawn(label, [&job, tweak, secret] {
            sleep_ms(400);
            wire::Hello h = hello_for(job, 2);
            tweak(h);
            return raw_handshake(job.port, h, secret);
        });
    };
    const std::size_t wrong_secret = kids.spawn("wrong-secret client", [&job] {
        sleep_ms(400);
        RendezvousConfig c = job.config(2);
        c.local_world_size = 1;  // a direct TCP client
        c.local_rank = 0;
        c.secret = "not the secret";
        c.timeout = milliseconds(3000);
        const auto start = Clock::now();
        Result<std::unique_ptr<Transport>> t = make_tcp_transport(c);
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
    const std::size_t duplicate = raw(
        "duplicate rank", [](wire::Hello& h) { h.rank = 1; }, job.secret);
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
    check.expect(kids.wait_all(milliseconds(15000)), "no process hangs");
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

// A process on the master port that does not know the secret but welcomes everyone.
int fake_root() {
    Checker check{"fake_root"};
    Job job = make_job("fake_root", 2, 2, milliseconds(4000));
    Children kids(4);
    kids.spawn("fake root", [&job] {
        const int lfd = ::socket(AF_INET, SOCK_STREAM, 0);
        const int one = 1;
        ::setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons(job.port);
        ::bind(lfd, reinterpret_cast<sockaddr*>(&a), sizeof a);
        ::listen(lfd, 16);
        const int fd = ::accept(lfd, nullptr, nullptr);
        send_bytes(fd, wire::encode_challenge(wire::Challenge{}));
        std::string buf;
        auto hello = read_frame(fd, buf, milliseconds(3000));
        wire::Welcome w;  // all-zero MAC: it cannot compute the real one
        w.rank = 0;
        w.host = "fake";
        send_bytes(fd, wire::encode_welcome(w));
        sleep_ms(500);
        ::close(fd);
        ::close(lfd);
        return Report{0, 0, hello ? "got hello" : "no hello"};
    });
    const std::size_t victim = kids.spawn("rank 1", [&job] {
        sleep_ms(200);
        return run_rank(job.config(1), 1);
    });
    check.expect(kids.wait_all(milliseconds(8000)), "no process hangs");
    check.expect_error(kids, victim, Errc::auth,
                       {"rank 0 at 127.0.0.1:" + std::to_string(job.port),
                        "could not prove it holds this step's secret"});
    check.expect_under(kids, victim, 2.0);
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
    Job job = make_job("garbage", 4, 2, milliseconds(8000));
    Children kids(16);
    std::vector<std::size_t> real;
    for (int r = 0; r < 4; ++r) real.push_back(spawn_rank(kids, job, r, r == 0 ? 0 : 800));
    auto junk = [&](const std::string& label, std::string bytes) {
        return kids.spawn(label, [&job, bytes] {
            const auto start = Clock::now();
            const int fd = connect_raw(job.port, milliseconds(3000));
            send_all(fd, bytes.data(), bytes.size());
            auto [got, eof] = read_until_eof(fd, milliseconds(3000));
            ::close(fd);
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
    const std::size_t scanner = kids.spawn("port scanner", [&job] {
        for (int i = 0; i < 50; ++i) {
            const int fd = connect_raw(job.port, milliseconds(3000));
            if (fd >= 0) ::close(fd);
        }
        return Report{0, 0, ""};
    });
    check.expect(kids.wait_all(milliseconds(15000)), "no process hangs");
    for (const std::size_t i : real) check.expect_ok(kids, i);
    check.expect_error(kids, http, Errc::protocol, {"bad magic"});
    check.expect_under(kids, http, 1.0);
    check.expect_error(kids, binary, Errc::protocol, {"bad magic"});
    check.expect_under(kids, binary, 1.0);
    check.expect_error(kids, bad_version, Errc::protocol, {"version 7"});
    check.expect_ok(kids, scanner);
    return check.failures;
}

// Connects, maybe sends `bytes`, then stays silent; reports when the server hangs up.
std::size_t silent_client(Children& kids, const Job& job, const std::string& label,
                          std::string bytes) {
    return kids.spawn(label, [&job, bytes] {
        const int fd = connect_raw(job.port, milliseconds(3000));
        const auto start = Clock::now();
        if (!bytes.empty()) send_all(fd, bytes.data(), bytes.size());
        auto [got, eof] = read_until_eof(fd, milliseconds(6000));
        ::close(fd);
        if (!eof) return report_error(make_error(Errc::timeout, "never dropped"), start);
        return report_error(make_error(Errc::protocol, reject_reason(got)), start);
    });
}

int slowloris() {
    Checker check{"slowloris"};
    // A 4 s timeout gives a 2 s handshake deadline; the rest of the job arrives at 2.5 s, so the
    // silent client must have been dropped by its own deadline, not by the end of the join.
    Job job = make_job("slowloris", 4, 2, milliseconds(4000));
    Children kids(8);
    std::vector<std::size_t> real{spawn_rank(kids, job, 0, 0)};
    const std::size_t silent = silent_client(kids, job, "silent client", "");
    const std::size_t dribble = silent_client(kids, job, "partial header", "SDD");
    for (int r = 1; r < 4; ++r) real.push_back(spawn_rank(kids, job, r, 2500));
    check.expect(kids.wait_all(milliseconds(12000)), "no process hangs");
    for (const std::size_t i : real) check.expect_ok(kids, i);
    for (const std::size_t i : {silent, dribble}) {
        check.expect(kids.report(i).code == static_cast<int>(Errc::protocol),
                     kids.label(i) + " should be dropped, got: " + kids.report(i).message);
        check.expect(kids.report(i).seconds >= 1.5 && kids.report(i).seconds <= 3.2,
                     kids.label(i) + " dropped after " + std::to_string(kids.report(i).seconds) +
                         " s, expected about 2 s");
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
    Job job = make_job("truncated", 2, 2, milliseconds(4000));
    Children kids(8);
    std::vector<std::size_t> real{spawn_rank(kids, job, 0, 0)};
    // Promises 200 bytes, sends 20, waits: dropped at the handshake deadline.
    const std::size_t short_body = silent_client(
        kids, job, "short body", header(wire::MsgType::hello, 200) + std::string(20, 'x'));
    // A complete frame whose payload is too short to be a hello: refused at once.
    const std::size_t bad_body = silent_client(
        kids, job, "truncated hello", header(wire::MsgType::hello, 10) + std::string(10, 'x'));
    const std::size_t half = kids.spawn("half header then close", [&job] {
        const int fd = connect_raw(job.port, milliseconds(3000));
        send_all(fd, "SDDP\x01", 5);
        ::close(fd);
        return Report{0, 0, ""};
    });
    real.push_back(spawn_rank(kids, job, 1, 2500));
    check.expect(kids.wait_all(milliseconds(12000)), "no process hangs");
    for (const std::size_t i : real) check.expect_ok(kids, i);
    check.expect(kids.report(short_body).code == static_cast<int>(Errc::protocol) &&
                     kids.report(short_body).seconds >= 1.5 &&
                     kids.report(short_body).seconds <= 3.2,
                 "short body dropped at the handshake deadline (" +
                     std::to_string(kids.report(short_body).seconds) + " s)");
    check.expect_error(kids, bad_body, Errc::protocol, {"truncated"});
    check.expect_under(kids, bad_body, 1.0);
    check.expect_ok(kids, half);
    return check.failures;
}

int huge_length() {
    Checker check{"huge_length"};
    Job job = make_job("huge_length", 2, 2, milliseconds(4000));
    Children kids(8);
    std::vector<std::size_t> real{spawn_rank(kids, job, 0, 0), spawn_rank(kids, job, 1, 1000)};
    const std::size_t huge =
        silent_client(kids, job, "4 GiB length", header(wire::MsgType::hello, 0xFFFFFFFFu));
    const std::size_t big =
        silent_client(kids, job, "5000-byte hello", header(wire::MsgType::hello, 5000));
    const std::size_t big_up =
        silent_client(kids, job, "200 MiB up before auth", header(wire::MsgType::up, 200u << 20));
    check.expect(kids.wait_all(milliseconds(10000)), "no process hangs");
    for (const std::size_t i : real) check.expect_ok(kids, i);
    for (const std::size_t i : {huge, big, big_up}) {
        check.expect_error(kids, i, Errc::protocol, {"exceeds the 4096-byte limit"});
        check.expect_under(kids, i, 1.0);
    }
    return check.failures;
}

int flood() {
    Checker check{"flood"};
    Job job = make_job("flood", 16, 4, milliseconds(8000));
    Children kids(24);
    std::vector<std::size_t> real;
    real.push_back(spawn_rank(kids, job, 0, 0));
    const std::size_t attacker = kids.spawn("attacker", [&job] {
        std::vector<int> held;
        for (int i = 0; i < 300; ++i) {
            // Once the job has joined, rank 0 stops listening: then the flood is over.
            const int fd = connect_raw(job.port, milliseconds(i == 0 ? 3000 : 100));
            if (fd < 0) break;
            if (i % 3 == 0) {
                held.push_back(fd);  // silent
            } else if (i % 3 == 1) {
                send_all(fd, "garbage garbage garbage", 23);
                held.push_back(fd);
            } else {
                ::close(fd);  // scanner
            }
        }
        sleep_ms(3000);
        for (const int fd : held) ::close(fd);
        return Report{0, 0, ""};
    });
    for (int r = 1; r < 16; ++r) real.push_back(spawn_rank(kids, job, r, 300));
    check.expect(kids.wait_all(milliseconds(15000)), "no process hangs");
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
