// SPDX-License-Identifier: Apache-2.0
// process_cost: what one rank's process spends from exec to holding the id, for the shipped
// library's C API, each HMAC library and a bare socket client, measured in the same run
// (docs/performance.md, "Per-process cost").
//
// For each repetition and each client in turn (interleaved, so load drifts hit all alike): a
// forked server is made ready (rank 0 of the library's TCP rendezvous for a rank client, the C
// API client itself as rank 0 for a C API client, a bare listener that writes the id for the
// floor client), the driver waits until its port listens, then spawns the client (posix_spawnp:
// exec at once) and reads the client's own report: its CPU since exec (dynamic loading included)
// and the wall time since the spawn, both at the moment it holds the 128-byte id.
//
//   process_cost [--reps 15] [--wrap 'valgrind --tool=callgrind --callgrind-out-file=%n.out']
//                name=kind:path ...        (kind: ours, capi or floor)
//
// --wrap runs each client under a command (%n: the client's name); the timing is then the
// wrapper's, meaningful only for its own output. Output: one "REP" line per run, then per client
//   RESULT name=<name> kind=<kind> reps=<n> cpu_med=<ms> cpu_min=<ms> wall_med=<ms> wall_min=<ms>
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/base/bytes.hpp"
#include "os/random_bytes.hpp"
#include "rendezvous/tcp_transport.hpp"

extern char** environ;

namespace {

constexpr std::size_t kIdBytes = 128;
constexpr double kListenWaitS = 10.0;
constexpr int kClientTimeoutS = 300;  // a client under callgrind is ~50x slower

struct Client {
    std::string name, kind, path;
    std::vector<double> cpu, wall;
};

double now_s() {
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

std::uint8_t id_byte(std::size_t i) {
    return static_cast<std::uint8_t>(i * 131);
}

std::uint16_t free_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
        std::perror("process_cost: free port");
        std::exit(1);
    }
    ::close(fd);
    return ntohs(a.sin_port);
}

// Whether some socket listens on the port (state 0A in /proc/net/tcp or tcp6; rank 0 binds the
// wildcard address): asking by connecting would itself be a peer the server has to turn away.
bool listening(std::uint16_t port) {
    char want[8];
    (void)std::snprintf(want, sizeof want, ":%04X", port);
    for (const char* file : {"/proc/net/tcp", "/proc/net/tcp6"}) {
        std::ifstream f(file);
        std::string line;
        while (std::getline(f, line)) {
            std::istringstream in(line);
            std::string sl, local, remote, st;
            in >> sl >> local >> remote >> st;
            if (st == "0A" && local.size() > 5 && local.ends_with(want)) return true;
        }
    }
    return false;
}

void serve_ours(std::uint16_t port, const std::string& secret) {
    sddp::RendezvousConfig c;
    c.world_size = 2;
    c.master_addr = "127.0.0.1";
    c.master_port = port;
    c.secret = secret;
    c.step_tag = "process-cost.0";
    c.host = "server";
    c.timeout = std::chrono::seconds(kClientTimeoutS);
    auto t = sddp::make_tcp_transport(c);
    if (!t.ok()) {
        (void)std::fprintf(stderr, "process_cost: server: %s\n", t.error().message.c_str());
        std::_Exit(1);
    }
    sddp::Bytes id(kIdBytes);
    for (std::size_t i = 0; i < kIdBytes; ++i) id[i] = id_byte(i);
    if (auto s = (*t)->broadcast(id, 0); !s.ok()) {
        (void)std::fprintf(stderr, "process_cost: server broadcast: %s\n",
                           s.error().message.c_str());
        std::_Exit(1);
    }
    std::_Exit(0);
}

void serve_floor(std::uint16_t port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd, 16) != 0) {
        std::perror("process_cost: floor server");
        std::_Exit(1);
    }
    ::alarm(kClientTimeoutS);
    const int c = ::accept(fd, nullptr, nullptr);
    std::uint8_t id[kIdBytes];
    for (std::size_t i = 0; i < kIdBytes; ++i) id[i] = id_byte(i);
    if (c < 0 || ::write(c, id, sizeof id) != static_cast<ssize_t>(sizeof id)) std::_Exit(1);
    char x;
    (void)!::read(c, &x, 1);  // until the client exits
    std::_Exit(0);
}

// Rank 0 of a C API client: the same program, which serves when SDDP_PC_ROLE=server.
[[noreturn]] void serve_capi(const std::string& path, const std::vector<std::string>& env) {
    for (const std::string& e : env) ::putenv(const_cast<char*>(e.c_str()));
    ::setenv("RANK", "0", 1);
    ::setenv("SDDP_PC_ROLE", "server", 1);
    const int null = ::open("/dev/null", O_WRONLY);
    if (null >= 0) ::dup2(null, 1);  // its stdout is the driver's report channel
    ::alarm(kClientTimeoutS);
    ::execl(path.c_str(), path.c_str(), static_cast<char*>(nullptr));
    std::perror("process_cost: exec C API server");
    std::_Exit(1);
}

std::string replace_name(std::string s, const std::string& name) {
    for (std::size_t p; (p = s.find("%n")) != std::string::npos;) s.replace(p, 2, name);
    return s;
}

// Runs one client against a fresh server; false (with a message) if anything failed.
bool run_once(Client& cl, const std::string& wrap) {
    const std::uint16_t port = free_port();
    std::string secret(32, '\0');
    if (auto r = sddp::random_bytes(secret.size()); r.ok()) secret.assign(r->begin(), r->end());
    const std::string env_port = "SDDP_PC_PORT=" + std::to_string(port);
    const std::string env_secret = "SDDP_PC_SECRET=" + sddp::to_hex(std::string_view(secret));
    // A C API client reads its identity as a torchrun-launched rank would.
    const std::vector<std::string> capi_env = {
        "WORLD_SIZE=2", "MASTER_ADDR=127.0.0.1", "MASTER_PORT=" + std::to_string(port),
        "SLURM_DDP_SECRET=" + sddp::to_hex(std::string_view(secret))};
    const pid_t server = ::fork();
    if (server == 0) {
        if (cl.kind == "floor") serve_floor(port);
        if (cl.kind == "capi") serve_capi(cl.path, capi_env);
        serve_ours(port, secret);
    }
    const double deadline = now_s() + kListenWaitS;
    while (!listening(port)) {
        if (now_s() > deadline) {
            (void)std::fprintf(stderr, "process_cost: %s: server never listened\n",
                               cl.name.c_str());
            ::kill(server, SIGKILL);
            ::waitpid(server, nullptr, 0);
            return false;
        }
        ::usleep(200);
    }
    int out[2];
    if (::pipe(out) != 0) std::exit(1);
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    const std::string env_spawn =
        "SDDP_PC_SPAWN_NS=" + std::to_string(ts.tv_sec * 1000000000LL + ts.tv_nsec);
    std::vector<std::string> args;
    if (!wrap.empty()) {
        std::istringstream in(replace_name(wrap, cl.name));
        for (std::string w; in >> w;) args.push_back(w);
    }
    args.push_back(cl.path);
    std::vector<char*> argv;
    argv.reserve(args.size() + 1);
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<std::string> env_keep;
    for (char** e = environ; *e != nullptr; ++e) env_keep.emplace_back(*e);
    env_keep.push_back(env_port);
    env_keep.push_back(env_secret);
    env_keep.push_back(env_spawn);
    if (cl.kind == "capi") {
        env_keep.insert(env_keep.end(), capi_env.begin(), capi_env.end());
        env_keep.emplace_back("RANK=1");
    }
    std::vector<char*> envp;
    envp.reserve(env_keep.size() + 1);
    for (auto& e : env_keep) envp.push_back(e.data());
    envp.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_addclose(&fa, out[0]);
    pid_t client = -1;
    const int rc = ::posix_spawnp(&client, argv[0], &fa, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&fa);
    ::close(out[1]);
    std::string report;
    if (rc == 0) {
        char buf[256];
        for (ssize_t n; (n = ::read(out[0], buf, sizeof buf)) > 0;) report.append(buf, n);
        ::waitpid(client, nullptr, 0);
    } else {
        (void)std::fprintf(stderr, "process_cost: spawn %s: %s\n", argv[0], std::strerror(rc));
        ::kill(server, SIGKILL);
    }
    ::close(out[0]);
    int st = 0;
    ::waitpid(server, &st, 0);
    double cpu = 0, wall = 0;
    if (rc != 0 || std::sscanf(report.c_str(), "cpu_ms=%lf wall_ms=%lf", &cpu, &wall) != 2) {
        (void)std::fprintf(stderr, "process_cost: %s: no report (got '%s')\n", cl.name.c_str(),
                           report.c_str());
        return false;
    }
    cl.cpu.push_back(cpu);
    cl.wall.push_back(wall);
    (void)std::printf("REP name=%s cpu_ms=%.4f wall_ms=%.4f\n", cl.name.c_str(), cpu, wall);
    return true;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
    int reps = 15;
    std::string wrap;
    std::vector<Client> clients;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--reps" && i + 1 < argc) {
            reps = std::atoi(argv[++i]);
        } else if (a == "--wrap" && i + 1 < argc) {
            wrap = argv[++i];
        } else if (const auto eq = a.find('='), colon = a.find(':');
                   eq != std::string::npos && colon != std::string::npos && colon > eq) {
            Client c{
                a.substr(0, eq), a.substr(eq + 1, colon - eq - 1), a.substr(colon + 1), {}, {}};
            if (c.kind != "ours" && c.kind != "floor" && c.kind != "capi") {
                (void)std::fprintf(stderr,
                                   "process_cost: kind '%s' of %s: use ours, capi or floor\n",
                                   c.kind.c_str(), c.name.c_str());
                return 2;
            }
            clients.push_back(c);
        } else {
            (void)std::fprintf(
                stderr, "usage: %s [--reps N] [--wrap CMD] name=ours|floor:path ...\n", argv[0]);
            return 2;
        }
    }
    if (clients.empty() || reps < 1) {
        (void)std::fprintf(stderr, "process_cost: give at least one client and --reps >= 1\n");
        return 2;
    }
    (void)std::setvbuf(stdout, nullptr, _IOLBF, 0);
    bool ok = true;
    for (int r = 0; r < reps; ++r)
        for (Client& c : clients) ok = run_once(c, wrap) && ok;
    for (const Client& c : clients) {
        (void)std::printf(
            "RESULT name=%s kind=%s reps=%zu cpu_med=%.4f cpu_min=%.4f wall_med=%.4f "
            "wall_min=%.4f\n",
            c.name.c_str(), c.kind.c_str(), c.cpu.size(), median(c.cpu),
            c.cpu.empty() ? 0 : *std::min_element(c.cpu.begin(), c.cpu.end()), median(c.wall),
            c.wall.empty() ? 0 : *std::min_element(c.wall.begin(), c.wall.end()));
    }
    return ok ? 0 : 1;
}
