// SPDX-License-Identifier: Apache-2.0
#include "harness.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <thread>

#include "os/random_bytes.hpp"
#include "rendezvous/tcp_transport.hpp"

namespace sddp::mp {
namespace {

struct Slot {
    int code;
    double seconds;
    char message[2048];
};

}  // namespace

const char* errc_name(int code) {
    switch (code) {
        case 0:
            return "ok";
        case static_cast<int>(Errc::invalid_input):
            return "invalid_input";
        case static_cast<int>(Errc::missing_input):
            return "missing_input";
        case static_cast<int>(Errc::too_large):
            return "too_large";
        case static_cast<int>(Errc::io):
            return "io";
        case static_cast<int>(Errc::timeout):
            return "timeout";
        case static_cast<int>(Errc::auth):
            return "auth";
        case static_cast<int>(Errc::protocol):
            return "protocol";
        case static_cast<int>(Errc::peer_lost):
            return "peer_lost";
        case static_cast<int>(Errc::unsupported):
            return "unsupported";
        case static_cast<int>(Errc::internal):
            return "internal";
        case -1:
            return "no report (crashed or killed)";
        default:
            return "?";
    }
}

std::uint16_t free_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    a.sin_port = 0;
    ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    ::close(fd);
    return ntohs(a.sin_port);
}

RendezvousConfig Job::config(int rank) const {
    RendezvousConfig c;
    c.rank = rank;
    c.world_size = world;
    const int per_node = world / nodes;
    c.node_rank = rank / per_node;
    c.local_rank = rank % per_node;
    c.local_world_size = per_node;
    c.master_addr = "127.0.0.1";
    c.master_port = port;
    c.secret = secret;
    c.step_tag = step_tag;
    c.host = "node" + std::to_string(c.node_rank);
    c.timeout = timeout;
    if (fanout > 0) {
        c.tree_fanout = fanout;
        for (const std::uint16_t p : leader_ports) c.leaders.push_back({"127.0.0.1", p});
    }
    return c;
}

Job make_job(const std::string& name, int world, int nodes, milliseconds timeout) {
    Job j;
    j.world = world;
    j.nodes = nodes;
    j.port = free_port();
    auto s = random_bytes(32);
    j.secret = s.ok() ? std::string(s->begin(), s->end()) : std::string(32, 'k');
    j.step_tag = "test." + name + "." + std::to_string(::getpid());
    j.timeout = timeout;
    return j;
}

Job make_tree_job(const std::string& name, int world, int nodes, int fanout, milliseconds timeout) {
    Job j = make_job(name, world, nodes, timeout);
    j.fanout = fanout;
    j.leader_ports.push_back(j.port);
    while (j.leader_ports.size() < static_cast<std::size_t>(nodes)) {
        const std::uint16_t p = free_port();
        if (std::find(j.leader_ports.begin(), j.leader_ports.end(), p) == j.leader_ports.end()) {
            j.leader_ports.push_back(p);
        }
    }
    return j;
}

Children::Children(std::size_t max_children) : max_(max_children) {
    shm_ = ::mmap(nullptr, sizeof(Slot) * max_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                  -1, 0);
    if (shm_ == MAP_FAILED) {
        std::perror("mmap");
        std::abort();
    }
    auto* slots = static_cast<Slot*>(shm_);
    for (std::size_t i = 0; i < max_; ++i) slots[i].code = -1;
}

Children::~Children() {
    for (std::size_t i = 0; i < pids_.size(); ++i) {
        if (pids_[i] > 0) {
            ::kill(pids_[i], SIGKILL);
            ::waitpid(pids_[i], nullptr, 0);
        }
    }
    ::munmap(shm_, sizeof(Slot) * max_);
}

std::size_t Children::spawn(const std::string& label, std::function<Report()> body) {
    const std::size_t i = pids_.size();
    if (i >= max_) std::abort();
    std::fflush(stdout);
    std::fflush(stderr);
    const pid_t pid = ::fork();
    if (pid < 0) {
        std::perror("fork");
        std::abort();
    }
    if (pid == 0) {
        const Report r = body();
        auto* slot = static_cast<Slot*>(shm_) + i;
        std::snprintf(slot->message, sizeof slot->message, "%s", r.message.c_str());
        slot->seconds = r.seconds;
        slot->code = r.code;
        ::_exit(r.code == 0 ? 0 : 1);
    }
    pids_.push_back(pid);
    labels_.push_back(label);
    reports_.emplace_back();
    return i;
}

void Children::kill(std::size_t i) {
    if (pids_[i] > 0) ::kill(pids_[i], SIGKILL);
}

bool Children::wait_all(milliseconds limit) {
    const auto deadline = Clock::now() + limit;
    std::size_t left = 0;
    for (const pid_t p : pids_) left += p > 0;
    bool hung = false;
    while (left > 0) {
        int status = 0;
        const pid_t p = ::waitpid(-1, &status, WNOHANG);
        if (p > 0) {
            for (pid_t& mine : pids_) {
                if (mine == p) {
                    mine = 0;
                    --left;
                }
            }
            continue;
        }
        if (Clock::now() >= deadline) {
            hung = true;
            for (std::size_t i = 0; i < pids_.size(); ++i) {
                if (pids_[i] > 0) {
                    std::printf("  HUNG: %s (pid %d) still running after %lld ms; killed\n",
                                labels_[i].c_str(), pids_[i],
                                static_cast<long long>(limit.count()));
                    ::kill(pids_[i], SIGKILL);
                    ::waitpid(pids_[i], nullptr, 0);
                    pids_[i] = 0;
                }
            }
            break;
        }
        std::this_thread::sleep_for(milliseconds(5));
    }
    const auto* slots = static_cast<const Slot*>(shm_);
    for (std::size_t i = 0; i < reports_.size(); ++i) {
        reports_[i].code = slots[i].code;
        reports_[i].seconds = slots[i].seconds;
        reports_[i].message = slots[i].code == -1 ? "" : slots[i].message;
    }
    return !hung;
}

Bytes pattern(std::uint64_t seed, std::size_t len) {
    Bytes out(len);
    std::uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    for (std::size_t i = 0; i < len; ++i) {
        x += 0x9E3779B97F4A7C15ull;
        std::uint64_t z = x;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        out[i] = static_cast<std::uint8_t>(z ^ (z >> 31));
    }
    return out;
}

Report report_error(const Error& e, Clock::time_point start) {
    Report r;
    r.code = static_cast<int>(e.code);
    r.message = e.message;
    r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return r;
}

Report run_rank(const RendezvousConfig& cfg, int rounds,
                const std::function<std::optional<Report>(Transport&, int round)>& before_round) {
    const auto start = Clock::now();
    Result<std::unique_ptr<Transport>> t = make_tcp_transport(cfg);
    if (!t.ok()) return report_error(t.error(), start);
    Transport& tr = **t;
    const int w = cfg.world_size;
    auto bad = [&](const std::string& what) {
        return report_error(make_error(Errc::internal, "rank " + std::to_string(cfg.rank) +
                                                           ": wrong result: " + what),
                            start);
    };
    for (int round = 0; round < rounds; ++round) {
        if (before_round) {
            if (std::optional<Report> r = before_round(tr, round)) return *r;
        }
        const std::uint64_t base = static_cast<std::uint64_t>(round) * 1000003u;
        // Broadcast from rank 0.
        const Bytes want = pattern(base + 7, 17 + (round * 131) % 300);
        Bytes b = cfg.rank == 0 ? want : Bytes{1, 2, 3};
        if (Status s = tr.broadcast(b, 0); !s.ok()) return report_error(s.error(), start);
        if (b != want) return bad("broadcast from 0 in round " + std::to_string(round));
        // Allgather of records of varied length (some empty).
        auto record = [&](int r) { return pattern(base + 100 + r, (r * 37 + round) % 97); };
        Result<std::vector<Bytes>> all = tr.allgather(record(cfg.rank));
        if (!all.ok()) return report_error(all.error(), start);
        if (static_cast<int>(all->size()) != w) return bad("allgather size");
        for (int r = 0; r < w; ++r) {
            if ((*all)[static_cast<std::size_t>(r)] != record(r)) {
                return bad("allgather record of rank " + std::to_string(r));
            }
        }
        // Gather: rank 0 holds every record, the others nothing.
        Result<std::vector<Bytes>> got = tr.gather(record(cfg.rank));
        if (!got.ok()) return report_error(got.error(), start);
        if (cfg.rank != 0 && !got->empty()) return bad("gather gave a non-root rank records");
        if (cfg.rank == 0) {
            if (static_cast<int>(got->size()) != w) return bad("gather size");
            for (int r = 0; r < w; ++r) {
                if ((*got)[static_cast<std::size_t>(r)] != record(r)) {
                    return bad("gather record of rank " + std::to_string(r));
                }
            }
        }
        if (Status s = tr.barrier(); !s.ok()) return report_error(s.error(), start);
        // Broadcast from the last rank: exercises the upward path.
        const Bytes want2 = pattern(base + 9, 64);
        Bytes b2 = cfg.rank == w - 1 ? want2 : Bytes{};
        if (Status s = tr.broadcast(b2, w - 1); !s.ok()) return report_error(s.error(), start);
        if (b2 != want2)
            return bad("broadcast from the last rank in round " + std::to_string(round));
    }
    Report r;
    r.code = 0;
    r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return r;
}

void Checker::expect(bool cond, const std::string& what) {
    if (cond) return;
    ++failures;
    std::printf("  FAIL: %s\n", what.c_str());
}

void Checker::expect_ok(const Children& c, std::size_t i) {
    const Report& r = c.report(i);
    expect(r.code == 0,
           c.label(i) + " should succeed but got " + errc_name(r.code) + ": " + r.message);
}

void Checker::expect_error(const Children& c, std::size_t i, Errc code,
                           const std::vector<std::string>& contains) {
    const Report& r = c.report(i);
    if (r.code != static_cast<int>(code)) {
        expect(false, c.label(i) + " should fail with " + errc_name(static_cast<int>(code)) +
                          " but got " + errc_name(r.code) + ": " + r.message);
        return;
    }
    for (const std::string& s : contains) {
        expect(r.message.find(s) != std::string::npos,
               c.label(i) + " error should mention '" + s + "': " + r.message);
    }
}

void Checker::expect_under(const Children& c, std::size_t i, double seconds) {
    const Report& r = c.report(i);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.2f s (limit %.2f s)", r.seconds, seconds);
    expect(r.seconds <= seconds, c.label(i) + " took " + buf);
}

int connect_raw(std::uint16_t port, milliseconds patience) {
    const auto deadline = Clock::now() + patience;
    for (;;) {
        const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        a.sin_port = htons(port);
        if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) return fd;
        ::close(fd);
        if (Clock::now() >= deadline) return -1;
        std::this_thread::sleep_for(milliseconds(10));
    }
}

std::pair<std::string, bool> read_until_eof(int fd, milliseconds limit) {
    const auto deadline = Clock::now() + limit;
    std::string got;
    for (;;) {
        const auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now()).count();
        if (left <= 0) return {got, false};
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(left)) <= 0) continue;
        char buf[4096];
        const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n <= 0) return {got, true};
        got.append(buf, static_cast<std::size_t>(n));
    }
}

void sleep_ms(int ms) {
    std::this_thread::sleep_for(milliseconds(ms));
}

// A non-blocking connect from `source` (an address on lo other than 127.0.0.1: another "host").
int start_connect(const char* source, std::uint16_t port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    sockaddr_in from{};
    from.sin_family = AF_INET;
    ::inet_pton(AF_INET, source, &from.sin_addr);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof from) != 0) {
        ::close(fd);
        return -1;
    }
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(port);
    ::inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0 && errno != EINPROGRESS) {
        ::close(fd);
        return -1;
    }
    return fd;
}

// A listening TCP socket on 127.0.0.1:port (SO_REUSEADDR), or -1.
int listen_on(std::uint16_t port) {
    const int lfd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const int one = 1;
    ::setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(lfd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(lfd, 64) != 0) {
        ::close(lfd);
        return -1;
    }
    return lfd;
}

// Connects to a node leader's abstract socket `name` (what /proc/net/unix shows any local user).
int connect_abstract(const std::string& name, milliseconds patience) {
    const auto until = Clock::now() + patience;
    for (;;) {
        const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_un a{};
        a.sun_family = AF_UNIX;
        std::memcpy(a.sun_path + 1, name.data(), std::min(name.size(), sizeof a.sun_path - 1));
        const auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
        if (::connect(fd, reinterpret_cast<sockaddr*>(&a), len) == 0) return fd;
        ::close(fd);
        if (Clock::now() >= until) return -1;
        sleep_ms(10);
    }
}

}  // namespace sddp::mp
