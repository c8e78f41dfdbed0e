// SPDX-License-Identifier: Apache-2.0
// One rank of bench/process_cost: joins a ready rank 0 over the library's authenticated TCP
// rendezvous (world of 2, no node-local information), receives the 128-byte id, then reports its
// own CPU since exec and the wall time since the driver's spawn, and exits at once: teardown is
// not part of the measurement. Built once per HMAC library (CMakeLists.txt).
//
// Environment (set by process_cost): SDDP_PC_PORT, SDDP_PC_SECRET (hex), SDDP_PC_SPAWN_NS
// (CLOCK_MONOTONIC at the spawn). Output, one line: "cpu_ms=<ms> wall_ms=<ms>".
#if defined(PROCESS_COST_OPENSSL_NO_CONFIG)
#include <openssl/crypto.h>
#endif

#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "rendezvous/tcp_transport.hpp"

namespace {

constexpr std::size_t kIdBytes = 128;

double cpu_ms() {
    rusage ru{};
    ::getrusage(RUSAGE_SELF, &ru);
    return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
           static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-3;
}

double now_ns() {
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

const char* need(const char* name) {
    const char* v = std::getenv(name);
    if (v == nullptr || *v == '\0') {
        (void)std::fprintf(stderr, "rank_client: %s is not set (run it through process_cost)\n",
                           name);
        std::_Exit(2);
    }
    return v;
}

std::string unhex(const std::string& h) {
    std::string out;
    for (std::size_t i = 0; i + 1 < h.size(); i += 2)
        out.push_back(static_cast<char>(std::stoi(h.substr(i, 2), nullptr, 16)));
    return out;
}

}  // namespace

int main() {
#if defined(PROCESS_COST_OPENSSL_NO_CONFIG)
    // The candidate that skips openssl.cnf (and with it any FIPS requirement of the site).
    OPENSSL_init_crypto(OPENSSL_INIT_NO_LOAD_CONFIG, nullptr);
#endif
    sddp::RendezvousConfig c;
    c.rank = 1;
    c.world_size = 2;
    c.node_rank = 1;
    c.master_addr = "127.0.0.1";
    c.master_port = static_cast<std::uint16_t>(std::atoi(need("SDDP_PC_PORT")));
    c.secret = unhex(need("SDDP_PC_SECRET"));
    c.step_tag = "process-cost.0";
    c.host = "client";
    c.timeout = std::chrono::milliseconds(120000);
    auto t = sddp::make_tcp_transport(c);
    if (!t.ok()) {
        (void)std::fprintf(stderr, "rank_client: join: %s\n", t.error().message.c_str());
        std::_Exit(1);
    }
    sddp::Bytes id;
    if (auto s = (*t)->broadcast(id, 0); !s.ok()) {
        (void)std::fprintf(stderr, "rank_client: broadcast: %s\n", s.error().message.c_str());
        std::_Exit(1);
    }
    const double cpu = cpu_ms();
    const double wall = (now_ns() - std::atof(need("SDDP_PC_SPAWN_NS"))) * 1e-6;
    if (id.size() != kIdBytes || id[5] != 5 * 131 % 256) {
        (void)std::fprintf(stderr, "rank_client: wrong id\n");
        std::_Exit(1);
    }
    (void)std::printf("cpu_ms=%.4f wall_ms=%.4f\n", cpu, wall);
    (void)std::fflush(stdout);
    std::_Exit(0);
}
