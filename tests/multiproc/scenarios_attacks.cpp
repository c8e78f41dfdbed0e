// SPDX-License-Identifier: Apache-2.0
// Attacks on the rendezvous by someone who can reach the port but holds no secret: a connection
// flood that tries to starve the join, a squatter on the port, log injection, an old peer. The
// job must get through (or fail with the right, prompt error), and rank 0 must say what
// happened once, not once per connection.
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <set>

#include <poll.h>

#include "harness.hpp"
#include "rendezvous/protocol/wire.hpp"
#include "rendezvous/tcp/auth.hpp"
#include "rendezvous/tcp_transport.hpp"
#include "scenarios.hpp"

namespace sddp::mp {
namespace {

// Runs `body` with this process's stderr in a temporary file; returns what was written there.
std::string with_stderr_captured(const std::function<void()>& body) {
    char path[] = "/tmp/sddp-mp-stderr-XXXXXX";
    const int fd = ::mkstemp(path);
    if (fd < 0) {
        body();
        return "(stderr not captured)";
    }
    ::unlink(path);
    (void)std::fflush(stderr);
    const int saved = ::dup(2);
    ::dup2(fd, 2);
    body();
    (void)std::fflush(stderr);
    ::dup2(saved, 2);
    ::close(saved);
    std::string out;
    char buf[4096];
    ::lseek(fd, 0, SEEK_SET);
    for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;)
        out.append(buf, static_cast<std::size_t>(n));
    ::close(fd);
    // Echo it, so a failing scenario's output still shows rank 0's log.
    (void)std::fwrite(out.data(), 1, out.size(), stderr);
    return out;
}

std::size_t count_lines_with(const std::string& text, const std::string& needle) {
    std::size_t n = 0;
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t end = text.find('\n', pos);
        if (end == std::string::npos) end = text.size();
        if (text.substr(pos, end - pos).find(needle) != std::string::npos) ++n;
        pos = end + 1;
    }
    return n;
}

// `sockets` silent connections from `source`, each reopened as soon as the server closes it,
// until the server stops listening (the join is over) or `limit` passes. Returns how many
// connections it opened in all.
Report silent_flood(const char* source, std::uint16_t port, int sockets, milliseconds limit) {
    const auto start = Clock::now();
    const int ep = ::epoll_create1(EPOLL_CLOEXEC);
    long opened = 0;
    int refused_in_a_row = 0;
    auto open_one = [&] {
        const int fd = start_connect(source, port);
        if (fd < 0) return;
        ++opened;
        epoll_event ev{};
        ev.events = EPOLLIN | EPOLLRDHUP;
        ev.data.fd = fd;
        ::epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
    };
    for (int i = 0; i < sockets; ++i) open_one();
    epoll_event events[256];
    while (Clock::now() - start < limit && refused_in_a_row < 200) {
        const int n = ::epoll_wait(ep, events, 256, 50);
        for (int i = 0; i < n; ++i) {
            const int fd = events[i].data.fd;
            char buf[512];
            ssize_t got = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);  // the challenge: ignored
            while (got > 0) got = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
            if (got == 0 || (got < 0 && errno != EAGAIN)) {
                const bool refused = got < 0 && errno == ECONNREFUSED;
                refused_in_a_row = refused ? refused_in_a_row + 1 : 0;
                ::close(fd);
                open_one();
            }
        }
    }
    ::close(ep);
    Report r;
    r.code = 0;
    r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    r.message = std::to_string(opened);
    return r;
}

// Scaled from "10,000 silent sockets from one host against a 64-rank step whose second node
// leader starts 8 s late": rank 0 gets a 256-descriptor limit (64 handshake slots, where a
// default 1M limit gives 4096), 600 reconnecting sockets from 127.0.0.2 (ten times the slots,
// where 10,000 is 2.4 times 4096), 16 ranks on 4 nodes, the second node 3 s late. Before the
// defence the table stayed full of the flood and the late leader was shed until the flood's
// handshakes expired (5 s later, and again after that).
int join_flood() {
    Checker check{"join_flood"};
    constexpr int kLateMs = 3000;
    Job job = make_job("join_flood", 16, 4, milliseconds(15000));
    Children kids(24);
    const std::size_t root = kids.spawn("rank 0", [&job] {
        const rlimit lim{256, 256};
        ::setrlimit(RLIMIT_NOFILE, &lim);
        Report r;
        const std::string log = with_stderr_captured([&] { r = run_rank(job.config(0), 1); });
        if (r.code != 0) return r;
        r.message = "lines about 127.0.0.2: " + std::to_string(count_lines_with(log, "127.0.0.2"));
        return r;
    });
    const std::size_t flood = kids.spawn("flood", [&job] {
        sleep_ms(300);
        return silent_flood("127.0.0.2", job.port, 600, milliseconds(kLateMs + 8000));
    });
    std::vector<std::size_t> ranks{root};
    for (int r = 1; r < job.world; ++r) {
        const bool late = r >= 4 && r < 8;
        ranks.push_back(kids.spawn("rank " + std::to_string(r), [&job, r, late] {
            sleep_ms(late ? kLateMs : 0);
            return run_rank(job.config(r), 1);
        }));
    }
    check.expect(kids.wait_all(milliseconds(30000)), "no process hangs");
    for (const std::size_t i : ranks) check.expect_ok(kids, i);
    // The join waits for the late node anyway; the flood may add at most 2 s to that.
    check.expect_under(kids, root, kLateMs / 1000.0 + 2.0);
    check.expect(kids.report(root).message == "lines about 127.0.0.2: 1",
                 "rank 0 reports the flood once: " + kids.report(root).message);
    const long opened = std::atol(kids.report(flood).message.c_str());
    check.expect(opened > 600,
                 "the flood kept reconnecting (" + kids.report(flood).message + " connections)");
    std::printf(
        "  join_flood: rank 0 done after %.2f s (late node at %.1f s), flood opened %ld "
        "connections\n",
        kids.report(root).seconds, kLateMs / 1000.0, opened);
    return check.failures;
}

// Node 1's leader is killed while its local rank waits for the join (rank 0 is late, so the
// leader is still trying to reach it; it has welcomed its local meanwhile). The local must fail
// within seconds naming its leader, not after the 20 s timeout saying only that it could not
// reach it.
int dead_leader_locals() {
    Checker check{"dead_leader_locals"};
    Job job = make_job("dead_leader_locals", 4, 2, milliseconds(10000));
    Children kids(4);
    // Ranks 0 and 1 never start: the leader keeps retrying rank 0 while its local waits.
    const std::size_t leader = kids.spawn("rank 2", [&job] { return run_rank(job.config(2), 1); });
    const std::size_t local = kids.spawn("rank 3", [&job] {
        sleep_ms(300);
        return run_rank(job.config(3), 1);
    });
    sleep_ms(1000);
    kids.kill(leader);
    check.expect(kids.wait_all(milliseconds(15000)), "no process hangs");
    check.expect_error(
        kids, local, Errc::peer_lost,
        {"rank 3", "lost connection to rank 2", "node leader of node 1", "exited or was killed"});
    // It started 0.7 s before the kill: it must know within seconds, not at its 10 s timeout.
    check.expect_under(kids, local, 0.7 + 3.0);
    return check.failures;
}

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

// One frame from `fd` (unsealed), nullopt on EOF, timeout or garbage.
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
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, 50) <= 0) continue;
        char tmp[4096];
        const ssize_t n = ::recv(fd, tmp, sizeof tmp, 0);
        if (n <= 0) return std::nullopt;
        buf.append(tmp, static_cast<std::size_t>(n));
    }
}

enum class Squat {
    refuse,   // a challenge and then a reject, or (every other one) an abort in its place
    garbage,  // an HTTP answer, or (every other one) a challenge of another protocol version
    silent,   // accepts and never says a word; keeps the connections open for `linger`
};

// A process without the secret squatting on the port for `hold`, answering as `how` says.
Report squat(std::uint16_t port, milliseconds hold, Squat how = Squat::refuse,
             milliseconds linger = milliseconds(0)) {
    const int lfd = listen_on(port);
    if (lfd < 0) return Report{static_cast<int>(Errc::io), 0, "squatter cannot bind"};
    const auto until = Clock::now() + hold;
    int served = 0;
    std::vector<int> held;
    while (Clock::now() < until) {
        pollfd p{lfd, POLLIN, 0};
        if (::poll(&p, 1, 20) <= 0) continue;
        const int fd = ::accept(lfd, nullptr, nullptr);
        if (fd < 0) continue;
        if (how == Squat::silent) {
            held.push_back(fd);
            ++served;
            continue;
        }
        if (how == Squat::garbage) {
            std::string answer = "HTTP/1.0 400 Bad Request\r\n\r\n";
            if (served++ % 2 == 1) {
                answer = std::string("SDDP\x02\x01\0\0\0\0\0\x20", 12) + std::string(32, '\0');
            }
            send_all(fd, answer.data(), answer.size());
            ::close(fd);
            continue;
        }
        if (served++ % 2 == 1) {
            send_bytes(fd, wire::encode_abort(wire::Abort{1, "rank 0 gave up: go home", {}}));
        } else {
            send_bytes(fd, wire::encode_challenge(wire::Challenge{}));
            std::string buf;
            (void)read_frame(fd, buf, milliseconds(500));
            send_bytes(fd, wire::encode_reject(wire::Reject{"go away", {}}));
        }
        ::close(fd);
    }
    // The listener goes (so rank 0 can bind the port); the silent connections stay.
    ::close(lfd);
    if (!held.empty()) sleep_ms(static_cast<int>(linger.count()));
    for (const int fd : held) ::close(fd);
    return Report{0, 0, std::to_string(served)};
}

// The race the squatter scenarios share: a squatter holds the port for 1.5 s answering as `how`
// says, rank 1 knocks from 0.2 s, the real rank 0 starts at `root_at`.
struct SquatRace {
    std::size_t squatter, root, victim;
};
SquatRace spawn_squat_race(Children& kids, const Job& job, Squat how, milliseconds root_at,
                           milliseconds linger = milliseconds(0)) {
    SquatRace r{};
    r.squatter = kids.spawn("squatter", [&job, how, linger] {
        return squat(job.port, milliseconds(1500), how, linger);
    });
    r.root = kids.spawn("rank 0", [&job, root_at] {
        sleep_ms(static_cast<int>(root_at.count()));
        return run_rank(job.config(0), 1);
    });
    r.victim = kids.spawn("rank 1", [&job] {
        sleep_ms(200);
        return run_rank(job.config(1), 1);
    });
    return r;
}

// Someone binds the derived port before rank 0 and answers with reject and abort frames. Rank
// 1 must not take them as final: it keeps trying, and joins the real rank 0 once that starts.
int squatter_then_root() {
    Checker check{"squatter_then_root"};
    Job job = make_job("squatter_then_root", 2, 2, milliseconds(8000));
    Children kids(4);
    const auto race = spawn_squat_race(kids, job, Squat::refuse, milliseconds(1700));
    check.expect(kids.wait_all(milliseconds(15000)), "no process hangs");
    check.expect_ok(kids, race.root);
    check.expect_ok(kids, race.victim);
    check.expect(std::atoi(kids.report(race.squatter).message.c_str()) >= 2,
                 "the squatter answered rank 1 (" + kids.report(race.squatter).message + " times)");
    return check.failures;
}

// Binds the abstract socket `name` as user `uid` for `hold`, sending a challenge to whoever
// connects (as a leader would) to lure a hello. Reports how many bytes it was sent.
Report squat_local_socket(const std::string& name, unsigned uid, milliseconds hold) {
    if (::setgid(uid) != 0 || ::setuid(uid) != 0) {
        return Report{static_cast<int>(Errc::internal), 0,
                      "cannot become uid " + std::to_string(uid)};
    }
    const int lfd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::memcpy(a.sun_path + 1, name.data(), std::min(name.size(), sizeof a.sun_path - 1));
    const auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
    if (::bind(lfd, reinterpret_cast<sockaddr*>(&a), len) != 0 || ::listen(lfd, 16) != 0) {
        return Report{static_cast<int>(Errc::io), 0, "squatter cannot bind"};
    }
    const auto until = Clock::now() + hold;
    std::size_t received = 0;
    int connections = 0;
    while (Clock::now() < until) {
        pollfd p{lfd, POLLIN, 0};
        if (::poll(&p, 1, 20) <= 0) continue;
        const int fd = ::accept(lfd, nullptr, nullptr);
        if (fd < 0) continue;
        ++connections;
        send_bytes(fd, wire::encode_challenge(wire::Challenge{}));
        auto [got, eof] = read_until_eof(fd, milliseconds(300));
        received += got.size();
        ::close(fd);
    }
    ::close(lfd);
    return Report{
        0, 0,
        std::to_string(received) + " bytes from " + std::to_string(connections) + " connections"};
}

// Another user's process binds node 1's node-local socket before its leader starts (the name was
// seen in /proc/net/unix during an earlier rendezvous), and another one connects to the real
// leader later. Rank 3 must send nothing to the squatter and join its real leader once that
// starts; the leader must not even send a challenge to the foreign client.
int local_socket_other_user() {
    Checker check{"local_socket_other_user"};
    if (::geteuid() != 0) {
        std::printf("  skipped: needs root to run a process as another user\n");
        return 0;
    }
    constexpr unsigned kNobody = 65534;
    Job job = make_job("local_socket_other_user", 4, 2, milliseconds(8000));
    const std::string name = tcp::local_socket_name(job.config(2));
    RendezvousConfig next = job.config(2);
    next.round = "check";
    check.expect(tcp::local_socket_name(next) != name,
                 "another rendezvous round of the step uses another socket name");
    Children kids(8);
    const std::size_t squatter = kids.spawn(
        "squatter", [name] { return squat_local_socket(name, kNobody, milliseconds(1000)); });
    std::vector<std::size_t> ranks;
    for (int r = 0; r < 4; ++r) {
        ranks.push_back(kids.spawn("rank " + std::to_string(r), [&job, r] {
            // Rank 0 last, so that node 1's leader is still joining, and not yet accepting its
            // locals, when the intruder knocks.
            sleep_ms(r == 2 ? 2000 : r == 0 ? 2500 : 200);
            return run_rank(job.config(r), 1);
        }));
    }
    const std::size_t intruder = kids.spawn("intruder", [name] {
        const auto start = Clock::now();
        if (::setgid(kNobody) != 0 || ::setuid(kNobody) != 0) {
            return report_error(make_error(Errc::internal, "cannot change user"), start);
        }
        sleep_ms(2100);
        const int fd = connect_abstract(name, milliseconds(3000));
        if (fd < 0) return report_error(make_error(Errc::io, "cannot connect"), start);
        auto [got, eof] = read_until_eof(fd, milliseconds(3000));
        ::close(fd);
        return Report{got.empty() && eof ? 0 : static_cast<int>(Errc::internal), 0,
                      std::to_string(got.size()) + " bytes, " + (eof ? "closed" : "kept open")};
    });
    check.expect(kids.wait_all(milliseconds(20000)), "no process hangs");
    for (const std::size_t i : ranks) check.expect_ok(kids, i);
    check.expect(
        kids.report(squatter).message.rfind("0 bytes from ", 0) == 0 &&
            kids.report(squatter).message != "0 bytes from 0 connections",
        "rank 3 reached the squatter and sent it nothing: " + kids.report(squatter).message);
    check.expect(
        kids.report(intruder).code == 0,
        "the leader closed the foreign client without a byte: " + kids.report(intruder).message);
    return check.failures;
}

// Node 1's leader cannot reach rank 0 (it never starts) and gives up at its deadline; then it
// tells its local rank why. Two strangers wait on its node-local socket meanwhile: one silent,
// one answering the challenge with a hello of the right step but without the secret. Neither
// may hear the reason (hosts, ports, what failed): only the peer that proves it is of this step.
int turn_away_tells_only_the_step() {
    Checker check{"turn_away_tells_only_the_step"};
    Job job = make_job("turn_away_tells_only_the_step", 4, 2, milliseconds(2000));
    const std::string name = tcp::local_socket_name(job.config(2));
    Children kids(6);
    kids.spawn("rank 2", [&job] { return run_rank(job.config(2), 1); });
    const std::size_t local = kids.spawn("rank 3", [&job] {
        sleep_ms(300);
        return run_rank(job.config(3), 1);
    });
    auto stranger = [&](const std::string& label, bool says_hello) {
        return kids.spawn(label, [&job, name, says_hello] {
            const auto start = Clock::now();
            sleep_ms(200);
            const int fd = connect_abstract(name, milliseconds(3000));
            if (fd < 0) return report_error(make_error(Errc::io, "cannot connect"), start);
            std::string buf;
            std::string heard;
            if (says_hello) {
                auto ch = read_frame(fd, buf, milliseconds(5000));
                if (ch) heard.assign(ch->second.begin(), ch->second.end());
                if (ch && ch->first == wire::MsgType::challenge) {
                    wire::Hello h;
                    h.rank = 3;
                    h.world_size = job.world;
                    h.local_rank = 1;
                    h.local_world_size = 2;
                    h.node_rank = 1;
                    h.step_tag = job.step_tag;
                    h.host = "stranger";
                    send_bytes(fd, wire::encode_hello(h));
                }
            }
            auto [rest, eof] = read_until_eof(fd, milliseconds(5000));
            ::close(fd);
            heard += buf + rest;
            if (heard.find("could not join") != std::string::npos) {
                return report_error(make_error(Errc::internal, "heard the reason"), start);
            }
            if (!eof) return report_error(make_error(Errc::timeout, "never closed"), start);
            return Report{0, 0, std::to_string(heard.size()) + " bytes, no reason"};
        });
    };
    const std::size_t silent = stranger("silent stranger", false);
    const std::size_t talker = stranger("stranger with a hello", true);
    check.expect(kids.wait_all(milliseconds(12000)), "no process hangs");
    check.expect_error(kids, local, Errc::timeout,
                       {"the node leader, rank 2 (node1), could not join", "rank 0 at"});
    check.expect_under(kids, local, 2.5);
    check.expect_ok(kids, silent);
    check.expect_ok(kids, talker);
    return check.failures;
}

// Before rank 0 listens, the port answers in garbage: an HTTP error, or a challenge of another
// protocol version. Nothing of it is proven with the secret, so rank 1 keeps trying and joins
// the real rank 0 once that starts.
int garbage_then_root() {
    Checker check{"garbage_then_root"};
    Job job = make_job("garbage_then_root", 2, 2, milliseconds(8000));
    Children kids(4);
    const auto race = spawn_squat_race(kids, job, Squat::garbage, milliseconds(2000));
    check.expect(kids.wait_all(milliseconds(15000)), "no process hangs");
    check.expect_ok(kids, race.root);
    check.expect_ok(kids, race.victim);
    check.expect(std::atoi(kids.report(race.squatter).message.c_str()) >= 2,
                 "the squatter answered rank 1 (" + kids.report(race.squatter).message + " times)");
    return check.failures;
}

// The garbage never stops: rank 1 tries to its deadline and then names what it heard.
int garbage_holds_port() {
    Checker check{"garbage_holds_port"};
    Job job = make_job("garbage_holds_port", 2, 2, milliseconds(2500));
    Children kids(4);
    kids.spawn("squatter", [&job] { return squat(job.port, milliseconds(4000), Squat::garbage); });
    const std::size_t victim = kids.spawn("rank 1", [&job] {
        sleep_ms(200);
        return run_rank(job.config(1), 1);
    });
    check.expect(kids.wait_all(milliseconds(10000)), "no process hangs");
    check.expect_error(kids, victim, Errc::protocol,
                       {"rank 0 at 127.0.0.1:" + std::to_string(job.port),
                        "does not speak this sddp rendezvous protocol",
                        "could not prove it holds this step's secret", "kept trying"});
    check.expect(kids.report(victim).seconds >= 2.0,
                 "rank 1 kept trying to its deadline (ended after " +
                     std::to_string(kids.report(victim).seconds) + " s)");
    return check.failures;
}

// A squatter accepts every connection and never answers, holding each open for 12 s; it leaves
// the port after 1.5 s and rank 0 starts at 2 s. One silent connection may cost rank 1 one bounded
// attempt (5 s), not its 20 s join deadline (without the bound: 13.5 s, when the squatter
// closes).
int silent_squatter_then_root() {
    Checker check{"silent_squatter_then_root"};
    Job job = make_job("silent_squatter_then_root", 2, 2, milliseconds(20000));
    Children kids(4);
    const auto race =
        spawn_squat_race(kids, job, Squat::silent, milliseconds(2000), milliseconds(12000));
    check.expect(kids.wait_all(milliseconds(30000)), "no process hangs");
    check.expect_ok(kids, race.root);
    check.expect_ok(kids, race.victim);
    check.expect(
        std::atoi(kids.report(race.squatter).message.c_str()) >= 1,
        "the squatter held a connection of rank 1 (" + kids.report(race.squatter).message + ")");
    // 0.2 s start + one 5 s attempt + the backoff, with room for a loaded machine.
    check.expect_under(kids, race.victim, 9.0);
    return check.failures;
}

// The squatter never leaves: rank 1 tries to its deadline and then says what it saw.
int squatter_holds_port() {
    Checker check{"squatter_holds_port"};
    Job job = make_job("squatter_holds_port", 2, 2, milliseconds(2500));
    Children kids(4);
    kids.spawn("squatter", [&job] { return squat(job.port, milliseconds(4000)); });
    const std::size_t victim = kids.spawn("rank 1", [&job] {
        sleep_ms(200);
        return run_rank(job.config(1), 1);
    });
    check.expect(kids.wait_all(milliseconds(10000)), "no process hangs");
    check.expect_error(kids, victim, Errc::auth,
                       {"rank 0 at 127.0.0.1:" + std::to_string(job.port),
                        "could not prove it holds this step's secret",
                        "Something else holds the port", "different SLURM_DDP_SECRET"});
    check.expect(kids.report(victim).seconds >= 2.0,
                 "rank 1 kept trying to its deadline (ended after " +
                     std::to_string(kids.report(victim).seconds) + " s)");
    check.expect_under(kids, victim, 3.5);
    return check.failures;
}

// A relay between rank 1 and rank 0 flips one byte of what rank 0 sends: by default the last
// payload byte of frame 3, the first after the handshake (the broadcast that carries the NCCL
// id); with `welcome_host`, the first byte of the host name in frame 2, the welcome.
Report tampering_relay(std::uint16_t listen_port, std::uint16_t target, milliseconds limit,
                       bool welcome_host = false) {
    const int lfd = listen_on(listen_port);
    if (lfd < 0) return Report{static_cast<int>(Errc::io), 0, "relay cannot bind"};
    const auto until = Clock::now() + limit;
    pollfd lp{lfd, POLLIN, 0};
    if (::poll(&lp, 1, static_cast<int>(limit.count())) <= 0) return Report{0, 0, "nobody came"};
    const int client = ::accept(lfd, nullptr, nullptr);
    const int server = connect_raw(target, milliseconds(3000));
    std::string down;  // everything the server sent, to find frame boundaries
    std::size_t forwarded = 0;
    std::optional<std::size_t> flip;
    bool flipped = false;
    while (Clock::now() < until) {
        pollfd p[2] = {{client, POLLIN, 0}, {server, POLLIN, 0}};
        if (::poll(p, 2, 50) <= 0) continue;
        char buf[65536];
        if (p[0].revents) {
            const ssize_t n = ::recv(client, buf, sizeof buf, 0);
            if (n <= 0) break;
            send_all(server, buf, static_cast<std::size_t>(n));
        }
        if (p[1].revents) {
            const ssize_t n = ::recv(server, buf, sizeof buf, 0);
            if (n <= 0) break;
            down.append(buf, static_cast<std::size_t>(n));
        }
        // Frame 1 is the challenge, 2 the welcome, 3 the first sealed one: its last payload
        // byte is known once its header is in, before any of its payload can be forwarded.
        auto length_at = [&](std::size_t off) -> std::optional<std::size_t> {
            if (down.size() < off + wire::kHeaderSize) return std::nullopt;
            std::uint32_t len = 0;
            for (std::size_t i = 0; i < 4; ++i) {
                len = (len << 8) | static_cast<std::uint8_t>(down[off + 8 + i]);
            }
            return wire::kHeaderSize + len;
        };
        if (!flip) {
            if (auto l1 = length_at(0)) {
                if (welcome_host) {
                    // Welcome payload: rank (4 bytes), host length (2), host.
                    if (length_at(*l1)) flip = *l1 + wire::kHeaderSize + 4 + 2;
                } else if (auto l2 = length_at(*l1)) {
                    if (auto l3 = length_at(*l1 + *l2)) flip = *l1 + *l2 + *l3 - 1;
                }
            }
        }
        if (flip && !flipped && *flip < down.size()) {
            down[*flip] = static_cast<char>(down[*flip] ^ 0x01);
            flipped = true;
        }
        std::size_t safe = down.size();
        if (flip && !flipped) safe = std::min(safe, *flip);
        if (safe > forwarded) {
            send_all(client, down.data() + forwarded, safe - forwarded);
            forwarded = safe;
        }
    }
    ::close(client);
    ::close(server);
    ::close(lfd);
    return Report{0, 0, flipped ? "flipped" : "never flipped"};
}

// The relay scenarios' shared set-up: rank 0 on the job's port, a tampering relay in front of
// it (`welcome_host`: it renames the host in the welcome instead of flipping a byte), and rank 1
// sent to the relay from 0.3 s.
struct RelayRace {
    std::size_t relay, victim;
};
RelayRace spawn_relay_race(Children& kids, const Job& job, milliseconds limit, bool welcome_host) {
    const std::uint16_t relay_port = free_port();
    kids.spawn("rank 0", [&job] { return run_rank(job.config(0), 1); });
    RelayRace r{};
    r.relay = kids.spawn("relay", [&job, relay_port, limit, welcome_host] {
        return tampering_relay(relay_port, job.port, limit, welcome_host);
    });
    r.victim = kids.spawn("rank 1", [&job, relay_port] {
        sleep_ms(300);
        RendezvousConfig c = job.config(1);
        c.master_port = relay_port;
        return run_rank(c, 1);
    });
    return r;
}

int relay_tampers() {
    Checker check{"relay_tampers"};
    Job job = make_job("relay_tampers", 2, 2, milliseconds(6000));
    Children kids(4);
    const auto race = spawn_relay_race(kids, job, milliseconds(5000), false);
    check.expect(kids.wait_all(milliseconds(12000)), "no process hangs");
    check.expect(kids.report(race.relay).message == "flipped",
                 "the relay altered a frame: " + kids.report(race.relay).message);
    check.expect_error(kids, race.victim, Errc::protocol, {"bad MAC"});
    check.expect_under(kids, race.victim, 3.0);
    return check.failures;
}

// The relay changes the host name in rank 0's welcome (rank 1 would name that host in every
// error about its parent). The welcome's proof covers the host: rank 1 must not accept it.
int relay_renames_host() {
    Checker check{"relay_renames_host"};
    Job job = make_job("relay_renames_host", 2, 2, milliseconds(5000));
    Children kids(4);
    const auto race = spawn_relay_race(kids, job, milliseconds(4500), true);
    check.expect(kids.wait_all(milliseconds(12000)), "no process hangs");
    check.expect(kids.report(race.relay).message == "flipped",
                 "the relay altered the welcome: " + kids.report(race.relay).message);
    check.expect_error(kids, race.victim, Errc::auth,
                       {"could not prove it holds this step's secret"});
    return check.failures;
}

// A prober sends a hello whose step tag holds a newline and a terminal escape. Rank 0's log
// gets them escaped, and the reject does not tell the prober this step's tag.
int log_injection() {
    Checker check{"log_injection"};
    Job job = make_job("log_injection", 2, 2, milliseconds(6000));
    Children kids(4);
    const std::size_t root = kids.spawn("rank 0", [&job] {
        Report r;
        const std::string log = with_stderr_captured([&] { r = run_rank(job.config(0), 1); });
        if (r.code != 0) return r;
        if (log.find('\x1b') != std::string::npos) r.message += " raw escape in log;";
        if (log.find("\n[FAKE]") != std::string::npos) r.message += " forged line in log;";
        if (log.find("\\x0a[FAKE]") == std::string::npos) r.message += " escaped tag not logged;";
        if (!r.message.empty()) r.code = static_cast<int>(Errc::internal);
        return r;
    });
    const std::size_t prober = kids.spawn("prober", [&job] {
        const auto start = Clock::now();
        const int fd = connect_raw(job.port, milliseconds(3000));
        std::string buf;
        auto ch = read_frame(fd, buf, milliseconds(2000));
        if (!ch) return report_error(make_error(Errc::internal, "no challenge"), start);
        wire::Hello h;
        h.rank = 1;
        h.world_size = 2;
        h.local_world_size = 1;
        h.step_tag = "evil\n[FAKE] rank 0: all ranks joined\x1b[2J";
        h.host = "prober";
        send_bytes(fd, wire::encode_hello(h));
        auto reply = read_frame(fd, buf, milliseconds(2000));
        ::close(fd);
        if (!reply || reply->first != wire::MsgType::reject) {
            return report_error(make_error(Errc::internal, "no reject"), start);
        }
        Result<wire::Reject> rej = wire::decode_reject(reply->second);
        return report_error(make_error(Errc::auth, rej.ok() ? rej->reason : "?"), start);
    });
    kids.spawn("rank 1", [&job] {
        sleep_ms(1000);
        return run_rank(job.config(1), 1);
    });
    check.expect(kids.wait_all(milliseconds(12000)), "no process hangs");
    check.expect_ok(kids, root);
    check.expect_error(kids, prober, Errc::auth, {"step tag mismatch"});
    check.expect(kids.report(prober).message.find(job.step_tag) == std::string::npos,
                 "the reject names this step's tag: " + kids.report(prober).message);
    return check.failures;
}

// Peers from the previous release (protocol 2, before the leaders' tree): a server that speaks
// it, and a client that does. Each side is refused naming both versions; the client only at its
// deadline, since anything on the port could send an old header.
int version_mismatch() {
    Checker check{"version_mismatch"};
    Job old_server = make_job("version_mismatch_old_server", 2, 2, milliseconds(2000));
    Job job = make_job("version_mismatch", 2, 2, milliseconds(6000));
    Children kids(6);
    std::string v2_challenge("SDDP\x02\x01\0\0\0\0\0\x20", 12);
    v2_challenge += std::string(32, '\0');
    kids.spawn("old rank 0", [&old_server, v2_challenge] {
        const int lfd = listen_on(old_server.port);
        pollfd p{lfd, POLLIN, 0};
        if (::poll(&p, 1, 3000) > 0) {
            const int fd = ::accept(lfd, nullptr, nullptr);
            send_all(fd, v2_challenge.data(), v2_challenge.size());
            sleep_ms(3000);
            ::close(fd);
        }
        ::close(lfd);
        return Report{0, 0, ""};
    });
    const std::size_t new_client = kids.spawn("new rank 1", [&old_server] {
        sleep_ms(200);
        return run_rank(old_server.config(1), 1);
    });
    const std::size_t root = kids.spawn("rank 0", [&job] { return run_rank(job.config(0), 1); });
    const std::size_t old_client = kids.spawn("old rank 1", [&job] {
        const auto start = Clock::now();
        const int fd = connect_raw(job.port, milliseconds(3000));
        std::string buf;
        (void)read_frame(fd, buf, milliseconds(2000));
        const std::string v2_hello("SDDP\x02\x02\0\0\0\0\0\x04xxxx", 16);
        send_all(fd, v2_hello.data(), v2_hello.size());
        auto reply = read_frame(fd, buf, milliseconds(2000));
        ::close(fd);
        if (!reply || reply->first != wire::MsgType::reject) {
            return report_error(make_error(Errc::internal, "no reject"), start);
        }
        Result<wire::Reject> rej = wire::decode_reject(reply->second);
        return report_error(make_error(Errc::protocol, rej.ok() ? rej->reason : "?"), start);
    });
    kids.spawn("rank 1", [&job] {
        sleep_ms(800);
        return run_rank(job.config(1), 1);
    });
    check.expect(kids.wait_all(milliseconds(12000)), "no process hangs");
    check.expect_error(kids, new_client, Errc::protocol,
                       {"peer speaks sddp rendezvous protocol v2, this library v3: all ranks "
                        "must use the same slurm-ddp version"});
    check.expect_under(kids, new_client, 3.0);
    check.expect_error(kids, old_client, Errc::protocol,
                       {"peer speaks sddp rendezvous protocol v2, this library v3"});
    check.expect_ok(kids, root);
    return check.failures;
}

}  // namespace

std::vector<Scenario> attack_scenarios() {
    return {
        {"join_flood", join_flood},
        {"dead_leader_locals", dead_leader_locals},
        {"squatter_then_root", squatter_then_root},
        {"squatter_holds_port", squatter_holds_port},
        {"garbage_then_root", garbage_then_root},
        {"turn_away_tells_only_the_step", turn_away_tells_only_the_step},
        {"local_socket_other_user", local_socket_other_user},
        {"garbage_holds_port", garbage_holds_port},
        {"silent_squatter_then_root", silent_squatter_then_root},
        {"relay_tampers", relay_tampers},
        {"relay_renames_host", relay_renames_host},
        {"log_injection", log_injection},
        {"version_mismatch", version_mismatch},
    };
}

}  // namespace sddp::mp
