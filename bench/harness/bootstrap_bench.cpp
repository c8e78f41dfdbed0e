// SPDX-License-Identifier: Apache-2.0
// bootstrap_bench: how long the rendezvous takes to hand a 128-byte NCCL unique id to N local
// ranks and to finish a preflight-like allgather of a 64-byte record per rank.
//
// Method (the same for every variant, and for bench/harness/tcpstore_bench.py and
// bench/harness/mpi_bcast.c as far as each allows): the parent initialises everything, forks N
// children, and waits until every child has reported ready and is blocked on a start pipe. It then
// reads CLOCK_MONOTONIC (the common start time) and closes the pipe's write end, which releases
// every child at once. Each child runs the rendezvous and writes CLOCK_MONOTONIC after it holds the
// id and after the allgather into a shared-memory slot. Reported: max(completion) - start over all
// ranks. Children then wait on a second pipe so no connection closes before every rank has
// finished. At each N the variants take turns, one repetition each, so that a machine whose speed
// drifts during the run weighs on all of them alike.
//
// Variants:
//   ours-2level  make_tcp_transport with a 32-byte secret (authenticated), N/8 "nodes" of 8
//                ranks (node leaders over TCP to rank 0, locals over abstract Unix sockets);
//                join + broadcast(128 B from rank 0) = "id"; then allgather(64 B) = "allgather".
//   ours-preflight  ours-2level, but the second exchange is the library's preflight as srun --ddp
//                runs it: a gather of real preflight records (host, GPU bus id: ~60 bytes) to
//                rank 0, which checks them and broadcasts its verdict ("ag" = id + preflight).
//   ours-flat    the same with no local information: every rank connects to rank 0 over TCP.
//   ours-tree    ours-2level with the node leaders in a k-ary tree (--fanout K, default 4;
//                node n's leader listens on its own port of 127.0.0.1): rank 0 talks to K
//                leaders, each leader to K more. ours-2level is the star it replaces.
//   floor        bare, unauthenticated single listener: rank 0 listens, epoll-accepts, writes
//                128 bytes to each connection; children connect (retrying every 1 ms while
//                refused) and read 128 bytes. Allgather: each child writes 64 bytes, rank 0
//                collects all and writes the N*64-byte table to every child.
//   floor-prelisten  the floor with its listener opened by the parent before the fork: no
//                race to listen(), no refused connects. Not a rendezvous anyone can deploy (the
//                root's socket cannot exist before the root); it shows what the race costs.
//   authfloor    the authenticated floor (auth_floor.c: plain C over libc and Nettle): the
//                library's guarantees with the least work we know, every rank over TCP to rank 0
//                (a star): challenge, hello with the client's proof, then a welcome whose proof
//                covers the id, sent as soon as the rank has proven itself; the all-gather's
//                records and table MACed under the step secret and both nonces.
//   authfloor-tree  the same in ours-2level's shape: N/8 nodes of 8, a node's leader over TCP
//                to rank 0, its other ranks over an abstract Unix socket to the leader.
//   authfloor-prelisten, authfloor-tree-prelisten  those two with their listeners (rank 0's,
//                and every leader's) opened by the parent before the fork, as floor-prelisten.
//   authfloor-tree-barrier  authfloor-tree under the library's contract, a complete world before
//                the id: welcomes without the id, a sealed "node complete" from each leader, then
//                the id in a message of its own once every rank is in (as ours' join + broadcast).
//
// Output: a human table, plus one machine-readable line per point:
//   RESULT impl=<variant> n=<N> reps=<R> ok=<ok reps> id_med=.. id_min=.. id_max=.. ag_med=..
//   ag_min=.. ag_max=..   (seconds)
//
//   bootstrap_bench [--variants ours-2level,ours-tree,ours-preflight,ours-flat,floor,
//                               floor-prelisten,authfloor,authfloor-tree,authfloor-prelisten,
//                               authfloor-tree-prelisten,authfloor-tree-barrier]
//                               (the default: all eleven)
//                   [--ns 2,8,64,256,1024] [--fanout 4]
//                   [--reps 5] [--reps-large 3] [--timeout-ms 120000] [--warm-crypto]
//
// Dynamic symbols are bound before the fork: the program re-executes itself once with
// LD_BIND_NOW=1 (its own relocations are bound at load already, -z now, but libnettle's and
// libstdc++'s are lazy), so no child spends the timed part resolving PLT entries the parent never
// called (~20% of a child's page faults in `perf record -e page-faults`). That is per-process
// start-up work, which bench/process_cost measures; it applies to every variant alike.
//
// --warm-crypto: every child sets libcrypto up before it reports ready, as a Python rank has
// (importing torch imports ssl and hashlib), so the clock and the CPU columns see the handshake
// alone, not OpenSSL's one-time per-process set-up.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#if SDDP_BENCH_AUTH_FLOOR
#include "auth_floor.h"
#endif
#include "os/hmac_sha256.hpp"
#include "os/random_bytes.hpp"
#include "rendezvous/preflight_exchange.hpp"
#include "rendezvous/tcp_transport.hpp"

namespace {

constexpr std::size_t kIdBytes = 128;
constexpr std::size_t kRecordBytes = 64;
int g_end_fd = -1;  // in a child: the read end of the "everyone is done" pipe
bool g_warm_crypto = false;

double now_s() {
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

struct Slot {
    std::atomic<int> state;  // 0 = not yet, 1 = ok, 2 = failed
    double t_id;
    double t_ag;
    double cpu_id;  // this process's CPU seconds (user + system) at t_id and t_ag (rank 0 only
    double cpu_ag;  // is reported: the root's serial work, which calibrates
                    // bench/model/scale_model.py)
    double cpu0;    // CPU seconds when released (fork and the wait for the start are not counted)
    char message[256];
};

struct Shared {
    std::atomic<int> ready;
    std::atomic<int> done;
    Slot slots[1];  // N of them
};

std::uint8_t id_byte(std::size_t i) {
    return static_cast<std::uint8_t>(i * 131 + 7);
}
std::uint8_t rec_byte(int rank, std::size_t i) {
    return static_cast<std::uint8_t>(rank * 31 + static_cast<int>(i) * 17 + 3);
}

double cpu_s() {
    rusage ru{};
    ::getrusage(RUSAGE_SELF, &ru);
    return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

void fail(Slot& s, const std::string& why) {
    std::snprintf(s.message, sizeof s.message, "%s", why.c_str());
    s.state.store(2);
}

// Reports success, then keeps this rank's connections up until the parent has seen every rank
// finish (EOF on the end pipe), so no early close disturbs the ranks still working.
void succeed(Slot& slot) {
    slot.state.store(1);
    char x;
    (void)!::read(g_end_fd, &x, 1);
}

// ---- ours ---------------------------------------------------------------------------------

struct OursJob {
    int world = 1;
    int per_node = 1;  // 1 = flat
    std::uint16_t port = 0;
    std::string secret;
    std::string step_tag;
    bool preflight = false;  // second exchange: the preflight (gather + verdict), not an allgather
    int fanout = 0;          // > 0: leaders' tree, node n's leader on leader_ports[n]
    std::vector<std::uint16_t> leader_ports;
};

void run_ours(const OursJob& job, int rank, Slot& slot) {
    sddp::RendezvousConfig c;
    c.rank = rank;
    c.world_size = job.world;
    c.node_rank = rank / job.per_node;
    c.local_rank = rank % job.per_node;
    c.local_world_size = job.per_node;
    c.master_addr = "127.0.0.1";
    c.master_port = job.port;
    c.secret = job.secret;
    c.step_tag = job.step_tag;
    c.host = "node" + std::to_string(c.node_rank);
    c.timeout = std::chrono::milliseconds(120000);
    if (job.fanout > 0) {
        c.tree_fanout = job.fanout;
        for (const std::uint16_t p : job.leader_ports) c.leaders.push_back({"127.0.0.1", p});
    }
    auto t = sddp::make_tcp_transport(c);
    if (!t.ok()) return fail(slot, "join: " + t.error().message);
    sddp::Bytes id;
    if (rank == 0) {
        id.resize(kIdBytes);
        for (std::size_t i = 0; i < kIdBytes; ++i) id[i] = id_byte(i);
    }
    if (auto s = (*t)->broadcast(id, 0); !s.ok())
        return fail(slot, "broadcast: " + s.error().message);
    slot.t_id = now_s();
    slot.cpu_id = cpu_s();
    if (id.size() != kIdBytes) return fail(slot, "wrong id size");
    for (std::size_t i = 0; i < kIdBytes; ++i)
        if (id[i] != id_byte(i)) return fail(slot, "wrong id bytes");
    if (job.preflight) {
        sddp::PreflightRecord r;
        r.step_tag = job.step_tag;
        r.world_size = static_cast<std::uint32_t>(job.world);
        r.rank = static_cast<std::uint32_t>(rank);
        r.host = c.host;
        r.pci_bus_id = "0000:" + std::to_string(16 + c.local_rank) + ":00.0";
        r.cuda_device = c.local_rank;
        auto out = sddp::run_preflight(**t, r, false);
        if (!out.ok()) return fail(slot, "preflight: " + out.error().message);
        slot.t_ag = now_s();
        slot.cpu_ag = cpu_s();
        if (!out->verdict.ok()) return fail(slot, "verdict: " + out->verdict.error().message);
        return succeed(slot);
    }
    std::uint8_t mine[kRecordBytes];
    for (std::size_t i = 0; i < kRecordBytes; ++i) mine[i] = rec_byte(rank, i);
    auto all = (*t)->allgather(std::span<const std::uint8_t>(mine, kRecordBytes));
    if (!all.ok()) return fail(slot, "allgather: " + all.error().message);
    slot.t_ag = now_s();
    slot.cpu_ag = cpu_s();
    if (static_cast<int>(all->size()) != job.world) return fail(slot, "wrong allgather size");
    for (int r = 0; r < job.world; ++r) {
        const auto& b = (*all)[static_cast<std::size_t>(r)];
        if (b.size() != kRecordBytes || b[5] != rec_byte(r, 5)) return fail(slot, "wrong record");
    }
    succeed(slot);
}

// ---- floor --------------------------------------------------------------------------------

bool write_all(int fd, const void* p, std::size_t n) {
    const auto* b = static_cast<const std::uint8_t*>(p);
    while (n > 0) {
        const ssize_t w = ::write(fd, b, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        b += w;
        n -= static_cast<std::size_t>(w);
    }
    return true;
}
bool read_all(int fd, void* p, std::size_t n) {
    auto* b = static_cast<std::uint8_t*>(p);
    while (n > 0) {
        const ssize_t r = ::read(fd, b, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;
        b += r;
        n -= static_cast<std::size_t>(r);
    }
    return true;
}

// A listening socket made by the parent before the fork (floor-prelisten); -1 = rank 0 opens
// its own after the start, racing the others like every other variant.
int listen_loopback(std::uint16_t port) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    const int l = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    const int one = 1;
    ::setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(l, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(l, 65535) != 0) {
        ::close(l);
        return -1;
    }
    return l;
}

void run_floor(int world, std::uint16_t port, int rank, Slot& slot, int prelistened = -1) {
    if (rank != 0 && prelistened >= 0) ::close(prelistened);
    std::uint8_t id[kIdBytes];
    std::vector<std::uint8_t> table(kRecordBytes * static_cast<std::size_t>(world));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    if (rank == 0) {
        for (std::size_t i = 0; i < kIdBytes; ++i) id[i] = id_byte(i);
        for (std::size_t i = 0; i < kRecordBytes; ++i) table[i] = rec_byte(0, i);
        const int l = prelistened >= 0 ? prelistened : listen_loopback(port);
        if (l < 0) return fail(slot, std::string("listen: ") + std::strerror(errno));
        const int one = 1;
        const int ep = ::epoll_create1(EPOLL_CLOEXEC);
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.fd = l;
        ::epoll_ctl(ep, EPOLL_CTL_ADD, l, &ev);
        std::vector<int> conns;
        conns.reserve(static_cast<std::size_t>(world));
        const double deadline = now_s() + 120;
        while (static_cast<int>(conns.size()) < world - 1) {
            epoll_event out[16];
            const int k = ::epoll_wait(ep, out, 16, 1000);
            if (now_s() > deadline) return fail(slot, "floor: accept timeout");
            if (k <= 0) continue;
            for (;;) {
                const int fd = ::accept4(l, nullptr, nullptr, SOCK_CLOEXEC);  // blocking socket
                if (fd < 0) break;
                ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                if (!write_all(fd, id, kIdBytes)) return fail(slot, "floor: write id");
                conns.push_back(fd);
            }
        }
        slot.t_id = now_s();
        slot.cpu_id = cpu_s();
        // Gather: every child sends [rank:4][record:64]; read them as they come (epoll).
        for (int fd : conns) {
            epoll_event e{};
            e.events = EPOLLIN;
            e.data.fd = fd;
            ::epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e);
        }
        int got = 0;
        while (got < world - 1) {
            epoll_event out[64];
            const int k = ::epoll_wait(ep, out, 64, 1000);
            if (now_s() > deadline) return fail(slot, "floor: gather timeout");
            for (int i = 0; i < k; ++i) {
                const int fd = out[i].data.fd;
                if (fd == l) continue;
                std::uint8_t msg[4 + kRecordBytes];
                if (!read_all(fd, msg, sizeof msg)) return fail(slot, "floor: gather read");
                std::uint32_t r;
                std::memcpy(&r, msg, 4);
                if (r >= static_cast<std::uint32_t>(world)) return fail(slot, "floor: bad rank");
                std::memcpy(&table[r * kRecordBytes], msg + 4, kRecordBytes);
                ::epoll_ctl(ep, EPOLL_CTL_DEL, fd, nullptr);
                ++got;
            }
        }
        for (int fd : conns)
            if (!write_all(fd, table.data(), table.size())) return fail(slot, "floor: write table");
        slot.t_ag = now_s();
        slot.cpu_ag = cpu_s();
        return succeed(slot);
    }
    int fd = -1;
    const double deadline = now_s() + 120;
    for (;;) {
        fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) break;
        const int err = errno;
        ::close(fd);
        if (now_s() > deadline)
            return fail(slot, std::string("floor connect: ") + std::strerror(err));
        ::usleep(1000);
    }
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (!read_all(fd, id, kIdBytes)) return fail(slot, "floor: read id");
    slot.t_id = now_s();
    slot.cpu_id = cpu_s();
    for (std::size_t i = 0; i < kIdBytes; ++i)
        if (id[i] != id_byte(i)) return fail(slot, "floor: wrong id");
    std::uint8_t msg[4 + kRecordBytes];
    const std::uint32_t r = static_cast<std::uint32_t>(rank);
    std::memcpy(msg, &r, 4);
    for (std::size_t i = 0; i < kRecordBytes; ++i) msg[4 + i] = rec_byte(rank, i);
    if (!write_all(fd, msg, sizeof msg)) return fail(slot, "floor: write record");
    if (!read_all(fd, table.data(), table.size())) return fail(slot, "floor: read table");
    slot.t_ag = now_s();
    slot.cpu_ag = cpu_s();
    for (int q = 0; q < world; ++q)
        if (table[q * kRecordBytes + 5] != rec_byte(q, 5)) return fail(slot, "floor: wrong record");
    succeed(slot);
}

// ---- the authenticated floor ----------------------------------------------------------------
#if SDDP_BENCH_AUTH_FLOOR

struct AuthJob {
    int world = 1;
    int per_node = 1;
    std::uint16_t port = 0;
    std::string secret;
    std::string step_tag;
    int tcp_listener = -1;
    std::vector<int> local_listeners;  // by node, when the parent opened them
    bool barrier = false;
};

void record_of(int rank, std::uint8_t out[AF_RECORD_BYTES]) {
    for (std::size_t i = 0; i < AF_RECORD_BYTES; ++i) out[i] = rec_byte(rank, i);
}

void run_auth_floor(const AuthJob& a, int rank, Slot& slot) {
    static std::uint8_t id[kIdBytes];
    for (std::size_t i = 0; i < kIdBytes; ++i) id[i] = id_byte(i);
    af_job job{};
    job.world = a.world;
    job.per_node = a.per_node;
    job.port = a.port;
    job.secret = reinterpret_cast<const std::uint8_t*>(a.secret.data());
    job.secret_len = a.secret.size();
    job.step_tag = a.step_tag.c_str();
    job.tcp_listener = a.tcp_listener;
    job.local_listeners = a.local_listeners.empty() ? nullptr : a.local_listeners.data();
    job.barrier = a.barrier ? 1 : 0;
    job.id = id;
    job.record_of = record_of;
    job.now = now_s;
    job.cpu = cpu_s;
    af_result r{};
    if (af_run_rank(&job, rank, &r) != 0) return fail(slot, r.why);
    slot.t_id = r.t_id;
    slot.cpu_id = r.cpu_id;
    slot.t_ag = r.t_ag;
    slot.cpu_ag = r.cpu_ag;
    for (std::size_t i = 0; i < kIdBytes; ++i)
        if (r.id[i] != id_byte(i)) return fail(slot, "authfloor: wrong id");
    for (int q = 0; q < a.world; ++q)
        if (r.table[static_cast<std::size_t>(q) * kRecordBytes + 5] != rec_byte(q, 5))
            return fail(slot, "authfloor: wrong record");
    succeed(slot);
}
#endif

// ---- harness ------------------------------------------------------------------------------

std::uint16_t free_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    ::close(fd);
    return ntohs(a.sin_port);
}

struct Sample {
    bool ok = false;
    double id = 0, ag = 0;
    double root_cpu_id = 0, root_cpu_ag = 0;
    double total_cpu = 0;     // all ranks' CPU seconds at t_ag (for the shared-core local model)
    double total_cpu_id = 0;  // the same at t_id
    std::string why;
};

Sample run_once(int n, const std::function<void(int, Slot&)>& body, double limit_s) {
    const std::size_t bytes = sizeof(Shared) + sizeof(Slot) * static_cast<std::size_t>(n);
    void* mem = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) {
        Sample f;
        f.why = "mmap failed";
        return f;
    }
    auto* sh = new (mem) Shared;
    sh->ready.store(0);
    sh->done.store(0);
    for (int i = 0; i < n; ++i) {
        new (&sh->slots[i]) Slot;
        sh->slots[i].state.store(0);
    }
    int start_pipe[2], end_pipe[2];
    if (::pipe(start_pipe) != 0 || ::pipe(end_pipe) != 0) {
        Sample f;
        f.why = "pipe failed";
        return f;
    }
    std::vector<pid_t> pids;
    for (int r = 0; r < n; ++r) {
        const pid_t pid = ::fork();
        if (pid < 0) {
            std::perror("fork");
            break;
        }
        if (pid == 0) {
            ::close(start_pipe[1]);
            ::close(end_pipe[1]);
            g_end_fd = end_pipe[0];
            if (g_warm_crypto) (void)sddp::start_crypto_warmup();  // joined before it returns
            sh->ready.fetch_add(1);
            char x;
            (void)!::read(start_pipe[0], &x, 1);  // EOF = go
            ::close(start_pipe[0]);
            sh->slots[r].cpu0 = cpu_s();
            body(r, sh->slots[r]);
            ::_exit(0);
        }
        pids.push_back(pid);
    }
    Sample s;
    const bool all_forked = static_cast<int>(pids.size()) == n;
    while (all_forked && sh->ready.load() < n) ::usleep(200);
    ::usleep(2000);  // let the last children reach read()
    const double start = now_s();
    ::close(start_pipe[1]);
    ::close(start_pipe[0]);
    ::close(end_pipe[0]);
    const double deadline = start + limit_s;
    for (;;) {
        int settled = 0;
        for (int r = 0; r < n; ++r) settled += sh->slots[r].state.load() != 0;
        if (settled == n || now_s() > deadline || !all_forked) break;
        ::usleep(500);
    }
    ::close(end_pipe[1]);  // release the children
    s.ok = all_forked;
    if (!all_forked) s.why = "fork failed";
    s.root_cpu_id = sh->slots[0].cpu_id - sh->slots[0].cpu0;
    s.root_cpu_ag = sh->slots[0].cpu_ag - sh->slots[0].cpu0;
    for (int r = 0; r < n; ++r) {
        const Slot& sl = sh->slots[r];
        const int st = sl.state.load();
        if (st != 1) {
            if (s.ok)
                s.why = "rank " + std::to_string(r) + ": " +
                        (st == 0 ? std::string("no report in time") : std::string(sl.message));
            s.ok = false;
            continue;
        }
        s.total_cpu += sl.cpu_ag - sl.cpu0;
        s.total_cpu_id += sl.cpu_id - sl.cpu0;
        s.id = std::max(s.id, sl.t_id - start);
        s.ag = std::max(s.ag, sl.t_ag - start);
    }
    const double reap_deadline = now_s() + 10;
    for (pid_t p : pids) {
        for (;;) {
            const pid_t w = ::waitpid(p, nullptr, WNOHANG);
            if (w == p || w < 0) break;
            if (now_s() > reap_deadline) {
                ::kill(p, SIGKILL);
                ::waitpid(p, nullptr, 0);
                break;
            }
            ::usleep(1000);
        }
    }
    ::munmap(mem, bytes);
    return s;
}

std::vector<std::string> split(const std::string& s) {
    std::vector<std::string> out;
    std::size_t i = 0;
    while (i <= s.size()) {
        const std::size_t j = s.find(',', i);
        out.push_back(s.substr(i, j == std::string::npos ? std::string::npos : j - i));
        if (j == std::string::npos) break;
        i = j + 1;
    }
    return out;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t k = v.size();
    return k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
}

// Every variant make_body knows, in the order of a default run.
constexpr char kVariants[] =
    "ours-2level,ours-tree,ours-preflight,ours-flat,floor,floor-prelisten,authfloor,authfloor-tree,"
    "authfloor-prelisten,authfloor-tree-prelisten,authfloor-tree-barrier";

bool known_variant(const std::string& v) {
    const std::vector<std::string> all = split(kVariants);
    return std::find(all.begin(), all.end(), v) != all.end();
}

// One repetition of variant `v` with N ranks: what each rank runs. The listeners of the
// -prelisten variants, opened here before the fork, are added to *listeners for the caller to
// close.
std::function<void(int, Slot&)> make_body(const std::string& v, int n, int rep, int fanout,
                                          std::vector<int>* listeners) {
    if (v == "floor-prelisten") {
        const std::uint16_t port = free_port();
        const int l = listen_loopback(port);
        listeners->push_back(l);
        return [n, port, l](int rank, Slot& s) { run_floor(n, port, rank, s, l); };
    }
    if (v.rfind("authfloor", 0) == 0) {
#if !SDDP_BENCH_AUTH_FLOOR
        return [](int, Slot& s) { fail(s, "authfloor: not built (no Nettle at configure)"); };
#else
        AuthJob a;
        a.world = n;
        a.per_node = v.find("-tree") != std::string::npos ? std::min(8, n) : 1;
        a.barrier = v.find("-barrier") != std::string::npos;
        a.port = free_port();
        auto sec = sddp::random_bytes(32);
        a.secret = sec.ok() ? std::string(sec->begin(), sec->end()) : std::string(32, 'k');
        a.step_tag = "bench." + std::to_string(::getpid()) + "." + v + "." + std::to_string(n) +
                     "." + std::to_string(rep);
        if (v.find("-prelisten") != std::string::npos) {
            // Every listener before the start. The children that do not own one keep it open:
            // closing up to N/8 of them in every child would be work no rank does.
            a.tcp_listener = listen_loopback(a.port);
            listeners->push_back(a.tcp_listener);
            if (a.per_node > 1) {
                af_job j{};
                j.world = n;
                j.per_node = a.per_node;
                j.port = a.port;
                j.secret = reinterpret_cast<const std::uint8_t*>(a.secret.data());
                j.secret_len = a.secret.size();
                j.step_tag = a.step_tag.c_str();
                for (int node = 0; node * a.per_node < n; ++node) {
                    char name[40];
                    af_local_name(&j, node, name);
                    a.local_listeners.push_back(af_listen_local(name));
                    listeners->push_back(a.local_listeners.back());
                }
            }
        }
        return [a](int rank, Slot& s) { run_auth_floor(a, rank, s); };
#endif
    }
    if (v == "floor") {
        const std::uint16_t port = free_port();
        return [n, port](int rank, Slot& s) { run_floor(n, port, rank, s); };
    }
    OursJob job;
    job.world = n;
    job.per_node = v == "ours-flat" ? 1 : std::min(8, n);
    job.preflight = v == "ours-preflight";
    job.port = free_port();
    if (v == "ours-tree") {
        job.fanout = fanout;
        job.leader_ports.push_back(job.port);
        const int nodes = (n + job.per_node - 1) / job.per_node;
        while (static_cast<int>(job.leader_ports.size()) < nodes) {
            const std::uint16_t p = free_port();
            if (std::find(job.leader_ports.begin(), job.leader_ports.end(), p) ==
                job.leader_ports.end()) {
                job.leader_ports.push_back(p);
            }
        }
    }
    auto sec = sddp::random_bytes(32);
    job.secret = sec.ok() ? std::string(sec->begin(), sec->end()) : std::string(32, 'k');
    job.step_tag = "bench." + std::to_string(::getpid()) + "." + v + "." + std::to_string(n) + "." +
                   std::to_string(rep);
    return [job](int rank, Slot& s) { run_ours(job, rank, s); };
}

// The samples of one variant at one N, and its table row and RESULT line.
struct Series {
    std::vector<double> ids, ags, cids, cags, tcpu, tcpu_id;
    std::string last_why;

    bool add(const Sample& s) {
        if (!s.ok) {
            last_why = s.why;
            return false;
        }
        ids.push_back(s.id);
        ags.push_back(s.ag);
        cids.push_back(s.root_cpu_id);
        cags.push_back(s.root_cpu_ag);
        tcpu.push_back(s.total_cpu);
        tcpu_id.push_back(s.total_cpu_id);
        return true;
    }

    void print(const std::string& v, int n, int reps) const {
        if (ids.empty()) {
            std::printf("%-12s %6d %d/%d  FAILED: %s\n", v.c_str(), n, 0, reps, last_why.c_str());
            std::printf("RESULT impl=%s n=%d reps=%d ok=0\n", v.c_str(), n, reps);
            std::fflush(stdout);
            return;
        }
        const auto [imin, imax] = std::minmax_element(ids.begin(), ids.end());
        const auto [amin, amax] = std::minmax_element(ags.begin(), ags.end());
        char c1[64], c2[64];
        std::snprintf(c1, sizeof c1, "%.2f (%.2f-%.2f)", median(ids) * 1e3, *imin * 1e3,
                      *imax * 1e3);
        std::snprintf(c2, sizeof c2, "%.2f (%.2f-%.2f)", median(ags) * 1e3, *amin * 1e3,
                      *amax * 1e3);
        std::printf("%-12s %6d %d/%d  %-28s %-28s\n", v.c_str(), n, static_cast<int>(ids.size()),
                    reps, c1, c2);
        std::printf(
            "RESULT impl=%s n=%d reps=%d ok=%zu id_med=%.6f id_min=%.6f id_max=%.6f "
            "ag_med=%.6f ag_min=%.6f ag_max=%.6f root_cpu_id=%.6f root_cpu_ag=%.6f "
            "total_cpu=%.6f total_cpu_id=%.6f\n",
            v.c_str(), n, reps, ids.size(), median(ids), *imin, *imax, median(ags), *amin, *amax,
            median(cids), median(cags), median(tcpu), median(tcpu_id));
        std::fflush(stdout);
    }
};

}  // namespace

int main(int argc, char** argv) {
    if (std::getenv("LD_BIND_NOW") == nullptr && ::setenv("LD_BIND_NOW", "1", 1) == 0) {
        ::execv("/proc/self/exe", argv);
        std::perror("bootstrap_bench: re-executing with LD_BIND_NOW=1 failed; going on lazily");
    }
    std::string variants = kVariants;
    int fanout = 4;
    std::string ns = "2,8,64,256,1024";
    int reps = 5, reps_large = 3;
    double limit_s = 120;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&]() -> std::string {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "%s needs a value\n", a.c_str());
                std::exit(2);
            }
            return argv[++i];
        };
        if (a == "--variants")
            variants = next();
        else if (a == "--ns")
            ns = next();
        else if (a == "--reps")
            reps = std::atoi(next().c_str());
        else if (a == "--reps-large")
            reps_large = std::atoi(next().c_str());
        else if (a == "--fanout")
            fanout = std::max(2, std::atoi(next().c_str()));
        else if (a == "--timeout-ms")
            limit_s = std::atof(next().c_str()) / 1000;
        else if (a == "--warm-crypto")
            g_warm_crypto = true;
        else {
            std::fprintf(stderr,
                         "usage: %s [--variants %s] [--ns 2,8,...] [--reps R] [--reps-large R]"
                         " [--fanout K] [--timeout-ms T] [--warm-crypto]\n",
                         argv[0], kVariants);
            return 2;
        }
    }
    ::signal(SIGPIPE, SIG_IGN);
    rlimit rl{};
    ::getrlimit(RLIMIT_NOFILE, &rl);
    rl.rlim_cur = rl.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &rl);
    std::printf(
        "# bootstrap_bench: RLIMIT_NOFILE=%llu, %ld online CPUs, LD_BIND_NOW=%s; times in ms "
        "from the common start to the LAST rank done\n",
        static_cast<unsigned long long>(rl.rlim_cur), ::sysconf(_SC_NPROCESSORS_ONLN),
        std::getenv("LD_BIND_NOW") != nullptr ? std::getenv("LD_BIND_NOW") : "unset");
    std::printf("%-12s %6s %4s  %-28s %-28s\n", "impl", "N", "ok", "id: median (min-max) ms",
                "allgather: median (min-max) ms");
    std::fflush(stdout);
    const std::vector<std::string> vs = split(variants);
    for (const std::string& v : vs) {
        if (!known_variant(v)) {
            std::fprintf(stderr, "unknown variant %s\n", v.c_str());
            return 2;
        }
    }
    int failures = 0;
    for (const std::string& nstr : split(ns)) {
        const int n = std::atoi(nstr.c_str());
        if (n < 2) continue;
        const int r_here = n >= 1024 ? std::min(reps, reps_large) : reps;
        // Repetition by repetition, every variant in turn: a machine whose speed drifts over
        // the minutes of a run slows every variant alike, so their ratio stays like with like.
        std::vector<Series> series(vs.size());
        for (int rep = 0; rep < r_here; ++rep) {
            for (std::size_t i = 0; i < vs.size(); ++i) {
                const std::string& v = vs[i];
                std::vector<int> listeners;
                const std::function<void(int, Slot&)> body =
                    make_body(v, n, rep, fanout, &listeners);
                Sample s = run_once(n, body, limit_s);
                for (const int l : listeners)
                    if (l >= 0) ::close(l);
                if (!series[i].add(s)) {
                    ++failures;
                    std::fprintf(stderr, "%s N=%d rep %d failed: %s\n", v.c_str(), n, rep,
                                 s.why.c_str());
                }
                ::usleep(50000);
            }
        }
        for (std::size_t i = 0; i < vs.size(); ++i) series[i].print(vs[i], n, r_here);
    }
    return failures ? 1 : 0;
}
