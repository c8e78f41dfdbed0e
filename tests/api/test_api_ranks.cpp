// SPDX-License-Identifier: Apache-2.0
// The C and C++ API across real processes on this host, without NCCL (no_nccl): sddp_init over
// TCP and (with stand-ins for libpmi2 and libpmix) over PMI2 and PMIx, the byte collectives,
// timeouts, and the errors a user sees. Usage: test_api_ranks <scenario> [ranks] [fake libpmi2 or
// libpmix path]; exit 0 = pass, 77 = skipped.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "slurm_ddp/bootstrap.hpp"
#include "spawn.hpp"

#ifdef SDDP_NCCL_PROGRAMS
#include <cuda_runtime_api.h>
#endif

using sddp_test::Env;

namespace {

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            std::fprintf(stderr, "%s:%d: check failed: %s (last error: %s)\n", __FILE__, __LINE__, \
                         #cond, sddp_last_error());                                                \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

bool contains(const char* text, const char* part) {
    return std::strstr(text, part) != nullptr;
}

sddp_options cpu_options(long long timeout_ms = 20000) {
    sddp_options o;
    sddp_options_init(&o);
    o.no_nccl = 1;
    o.timeout_ms = timeout_ms;
    return o;
}

// sddp_init + allgather + broadcast + barrier + finalize, checking every value.
int exercise(int expect_rank, int world, const char* expect_transport, int record_len) {
    sddp_options o = cpu_options();
    sddp_handle* h = nullptr;
    CHECK(sddp_init(&o, &h) == SDDP_OK);
    CHECK(h != nullptr);
    CHECK(sddp_rank(h) == expect_rank);
    CHECK(sddp_world_size(h) == world);
    CHECK(std::strcmp(sddp_transport_name(h), expect_transport) == 0);
    CHECK(sddp_cuda_device(h) == -1);
    CHECK(sddp_nccl_comm(h) == nullptr);

    std::vector<unsigned char> mine(static_cast<std::size_t>(record_len));
    for (int i = 0; i < record_len; ++i) mine[i] = static_cast<unsigned char>(expect_rank * 31 + i);
    std::vector<unsigned char> all(mine.size() * static_cast<std::size_t>(world));
    CHECK(sddp_allgather(h, mine.data(), mine.size(), all.data()) == SDDP_OK);
    for (int r = 0; r < world; ++r) {
        for (int i = 0; i < record_len; ++i) {
            CHECK(all[static_cast<std::size_t>(r * record_len + i)] ==
                  static_cast<unsigned char>(r * 31 + i));
        }
    }

    char msg[200] = {};
    const int root = world - 1;
    if (expect_rank == root) std::snprintf(msg, sizeof msg, "hello from rank %d", root);
    CHECK(sddp_broadcast(h, msg, sizeof msg, root) == SDDP_OK);
    char want[200] = {};
    std::snprintf(want, sizeof want, "hello from rank %d", root);
    CHECK(std::memcmp(msg, want, sizeof msg) == 0);

    // A size mismatch is refused, not silently truncated.
    if (world > 1) {
        int x = 7;
        char big[8] = {};
        const int rc = expect_rank == 0 ? sddp_broadcast(h, big, sizeof big, 0)
                                        : sddp_broadcast(h, &x, sizeof x, 0);
        if (expect_rank != 0) {
            CHECK(rc == SDDP_ERR_INVALID_ARGUMENT);
            CHECK(contains(sddp_last_error(), "same len"));
        }
    }
    CHECK(sddp_barrier(h) == SDDP_OK);

    // Host names, as examples/c_minimal does.
    char host[64] = {};
    std::snprintf(host, sizeof host, "%s", sddp_host(h));
    std::vector<char> hosts(sizeof host * static_cast<std::size_t>(world));
    CHECK(sddp_allgather(h, host, sizeof host, hosts.data()) == SDDP_OK);
    CHECK(std::strcmp(hosts.data(), host) == 0);  // one host here
    CHECK(sddp_finalize(h) == SDDP_OK);
    return 0;
}

Env tcp_env(int rank, int world, int port) {
    return Env{{"RANK", std::to_string(rank)},
               {"WORLD_SIZE", std::to_string(world)},
               {"MASTER_ADDR", "127.0.0.1"},
               {"MASTER_PORT", std::to_string(port)},
               // A launch without Slurm and without a secret: the explicit, unsafe opt-in.
               {"SLURM_DDP_ALLOW_UNAUTHENTICATED", "1"}};
}

// The same launch opting in through the option field instead of the environment.
int scenario_tcp_opt_in_field(int n) {
    const int port = sddp_test::free_port();
    auto st = sddp_test::run_ranks(
        n,
        [&](int r) {
            Env e = tcp_env(r, n, port);
            e.erase("SLURM_DDP_ALLOW_UNAUTHENTICATED");
            return e;
        },
        [&](int r) {
            sddp_options o = cpu_options();
            o.allow_unauthenticated = 1;
            sddp_handle* h = nullptr;
            CHECK(sddp_init(&o, &h) == SDDP_OK);
            CHECK(sddp_rank(h) == r);
            CHECK(sddp_barrier(h) == SDDP_OK);
            CHECK(sddp_finalize(h) == SDDP_OK);
            return 0;
        });
    return sddp_test::all_zero(st) ? 0 : 1;
}

const std::string kSecret = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

int scenario_tcp(int n) {
    const int port = sddp_test::free_port();
    auto st = sddp_test::run_ranks(
        n, [&](int r) { return tcp_env(r, n, port); },
        [&](int r) { return exercise(r, n, n == 1 ? "self" : "tcp", 8); });
    return sddp_test::all_zero(st) ? 0 : 1;
}

// Two "nodes" on this host: the TCP tree's node leaders and abstract sockets, a secret, a step.
int scenario_tcp_nodes(int n) {
    const int port = sddp_test::free_port();
    const int per_node = n / 2;
    auto st = sddp_test::run_ranks(
        n,
        [&](int r) {
            Env e = tcp_env(r, n, port);
            e["LOCAL_RANK"] = std::to_string(r % per_node);
            e["LOCAL_WORLD_SIZE"] = std::to_string(per_node);
            e["NODE_RANK"] = std::to_string(r / per_node);
            e["NNODES"] = "2";
            e["SLURM_DDP_SECRET"] = kSecret;
            e["SLURM_DDP_STEP"] = "123.4";
            return e;
        },
        [&](int r) {
            sddp_options o = cpu_options();
            sddp_handle* h = nullptr;
            CHECK(sddp_init(&o, &h) == SDDP_OK);
            CHECK(sddp_node_rank(h) == r / per_node);
            CHECK(sddp_num_nodes(h) == 2);
            CHECK(sddp_local_rank(h) == r % per_node);
            CHECK(sddp_local_world_size(h) == per_node);
            CHECK(std::strcmp(sddp_identity_source(h), "ddp") == 0);
            int v = r * r;
            std::vector<int> all(static_cast<std::size_t>(n));
            CHECK(sddp_allgather(h, &v, sizeof v, all.data()) == SDDP_OK);
            for (int i = 0; i < n; ++i) CHECK(all[i] == i * i);
            CHECK(sddp_finalize(h) == SDDP_OK);
            return 0;
        });
    return sddp_test::all_zero(st) ? 0 : 1;
}

// The C++ wrapper: RAII, exceptions, allgather returning a vector.
int scenario_cpp(int n) {
    const int port = sddp_test::free_port();
    auto st = sddp_test::run_ranks(
        n, [&](int r) { return tcp_env(r, n, port); },
        [&](int r) {
            try {
                slurm_ddp::Options o;
                o.nccl = false;
                o.timeout_ms = 20000;
                slurm_ddp::Session s(o);
                if (s.rank() != r || s.world_size() != n) return 1;
                const auto all = s.allgather(&r, sizeof r);
                for (int i = 0; i < n; ++i) {
                    int v = 0;
                    std::memcpy(&v, all.data() + i * sizeof(int), sizeof v);
                    if (v != i) return 1;
                }
                s.barrier();
                s.finalize();
            } catch (const slurm_ddp::Error& e) {
                std::fprintf(stderr, "rank %d: %s (%s)\n", r, e.what(), sddp_status_name(e.code()));
                return 1;
            }
            // Errors become exceptions carrying the status.
            try {
                setenv("RANK", "9", 1);
                slurm_ddp::Options o;
                o.nccl = false;
                slurm_ddp::Session bad(o);
                return 1;
            } catch (const slurm_ddp::Error& e) {
                if (e.code() != SDDP_ERR_IDENTITY || !contains(e.what(), "RANK=9")) return 1;
            }
            return 0;
        });
    return sddp_test::all_zero(st) ? 0 : 1;
}

Env pmi_env(int rank, int world, const std::string& lib, const std::string& dir) {
    return Env{{"PMI_RANK", std::to_string(rank)},
               {"PMI_SIZE", std::to_string(world)},
               {"PMI_FD", "99"},
               {"PMI_JOBID", "555.0"},
               {"SLURM_JOB_ID", "555"},
               {"SLURM_DDP_PMI2_LIBRARY", lib},
               {"FAKE_PMI2_DIR", dir}};
}

std::string temp_dir() {
    char tmpl[] = "/tmp/sddp-pmi2-XXXXXX";
    const char* d = mkdtemp(tmpl);
    if (!d) {
        std::perror("mkdtemp");
        std::exit(2);
    }
    return d;
}

int scenario_pmi2(int n, const std::string& lib) {
    const std::string dir = temp_dir();
    auto st = sddp_test::run_ranks(
        n, [&](int r) { return pmi_env(r, n, lib, dir); },
        // 1300-byte records: three PMI2 values each (chunking).
        [&](int r) { return exercise(r, n, n == 1 ? "self" : "pmi2", 1300); });
    return sddp_test::all_zero(st) ? 0 : 1;
}

// With node and local ranks known (srun --ddp's variables) the preflight is a gather to rank 0
// and a broadcast of its verdict: the PMI2 transport's gather path.
int scenario_pmi2_nodes(int n, const std::string& lib) {
    const std::string dir = temp_dir();
    const int per_node = n / 2;
    auto st = sddp_test::run_ranks(
        n,
        [&](int r) {
            Env e = pmi_env(r, n, lib, dir);
            e["SLURM_DDP_TRANSPORT"] = "pmi2";
            e["RANK"] = std::to_string(r);
            e["WORLD_SIZE"] = std::to_string(n);
            e["LOCAL_RANK"] = std::to_string(r % per_node);
            e["LOCAL_WORLD_SIZE"] = std::to_string(per_node);
            e["NODE_RANK"] = std::to_string(r / per_node);
            e["NNODES"] = "2";
            return e;
        },
        [&](int r) { return exercise(r, n, "pmi2", 100); });
    return sddp_test::all_zero(st) ? 0 : 1;
}

// One rank never arrives: the others' fence must end at the deadline with a clear error.
int scenario_pmi2_timeout(const std::string& lib) {
    const std::string dir = temp_dir();
    const int n = 3;
    auto st = sddp_test::run_ranks(
        n, [&](int r) { return pmi_env(r, n, lib, dir); },
        [&](int r) {
            if (r == 2) {
                std::this_thread::sleep_for(std::chrono::seconds(4));
                return 0;
            }
            const auto t0 = std::chrono::steady_clock::now();
            sddp_options o = cpu_options(1500);
            sddp_handle* h = nullptr;
            const int rc = sddp_init(&o, &h);
            const auto took = std::chrono::steady_clock::now() - t0;
            CHECK(rc == SDDP_ERR_TIMEOUT);
            CHECK(h == nullptr);
            CHECK(contains(sddp_last_error(), "PMI2_KVS_Fence"));
            CHECK(contains(sddp_last_error(), "SLURM_DDP_TIMEOUT"));
            CHECK(took < std::chrono::milliseconds(3500));
            return 0;
        });
    return sddp_test::all_zero(st) ? 0 : 1;
}

// What a PMIx server gives a task (srun --mpi=pmix), plus the stand-in libpmix's directory.
Env pmix_env(int rank, int world, const std::string& lib, const std::string& dir) {
    return Env{{"PMIX_RANK", std::to_string(rank)},
               {"PMIX_NAMESPACE", "slurm.pmix.555.0"},
               {"PMIX_SERVER_URI41", "pmix-server.1;tcp4://127.0.0.1:1"},
               {"SLURM_JOB_ID", "555"},
               {"RANK", std::to_string(rank)},
               {"WORLD_SIZE", std::to_string(world)},
               {"SLURM_DDP_PMIX_LIBRARY", lib},
               {"FAKE_PMIX_DIR", dir},
               {"FAKE_PMIX_SIZE", std::to_string(world)}};
}

// Chosen automatically; 70 kB records travel as single byte objects.
int scenario_pmix(int n, const std::string& lib) {
    const std::string dir = temp_dir();
    auto st = sddp_test::run_ranks(
        n, [&](int r) { return pmix_env(r, n, lib, dir); },
        [&](int r) { return exercise(r, n, n == 1 ? "self" : "pmix", 70000); });
    return sddp_test::all_zero(st) ? 0 : 1;
}

// Forced by SLURM_DDP_TRANSPORT, with node and local ranks known: the gather path.
int scenario_pmix_nodes(int n, const std::string& lib) {
    const std::string dir = temp_dir();
    const int per_node = n / 2;
    auto st = sddp_test::run_ranks(
        n,
        [&](int r) {
            Env e = pmix_env(r, n, lib, dir);
            e["SLURM_DDP_TRANSPORT"] = "pmix";
            e["LOCAL_RANK"] = std::to_string(r % per_node);
            e["LOCAL_WORLD_SIZE"] = std::to_string(per_node);
            e["NODE_RANK"] = std::to_string(r / per_node);
            e["NNODES"] = "2";
            return e;
        },
        [&](int r) { return exercise(r, n, "pmix", 100); });
    return sddp_test::all_zero(st) ? 0 : 1;
}

// One rank never arrives: the others' fence ends at the deadline with a clear error, and a
// rank whose identity disagrees with PMIx's numbering is refused.
int scenario_pmix_timeout(const std::string& lib) {
    const std::string dir = temp_dir();
    const int n = 3;
    auto st = sddp_test::run_ranks(
        n, [&](int r) { return pmix_env(r, n, lib, dir); },
        [&](int r) {
            if (r == 2) {
                std::this_thread::sleep_for(std::chrono::seconds(4));
                return 0;
            }
            const auto t0 = std::chrono::steady_clock::now();
            sddp_options o = cpu_options(1500);
            sddp_handle* h = nullptr;
            const int rc = sddp_init(&o, &h);
            const auto took = std::chrono::steady_clock::now() - t0;
            CHECK(rc == SDDP_ERR_TIMEOUT);
            CHECK(h == nullptr);
            CHECK(contains(sddp_last_error(), "PMIx_Fence"));
            CHECK(contains(sddp_last_error(), "SLURM_DDP_TIMEOUT"));
            CHECK(took < std::chrono::milliseconds(3500));
            // PMIx stays unusable in this process, with the reason.
            CHECK(sddp_init(&o, &h) == SDDP_ERR_TIMEOUT);
            CHECK(contains(sddp_last_error(), "PMIx is unusable"));
            return 0;
        });
    if (!sddp_test::all_zero(st)) return 1;
    const std::string dir2 = temp_dir();
    st = sddp_test::run_ranks(
        2,
        [&](int r) {
            Env e = pmix_env(r, 2, lib, dir2);
            e["RANK"] = std::to_string(1 - r);  // swapped: not this step's numbering
            return e;
        },
        [&](int) {
            sddp_options o = cpu_options(5000);
            sddp_handle* h = nullptr;
            CHECK(sddp_init(&o, &h) != SDDP_OK);
            CHECK(h == nullptr);
            CHECK(contains(sddp_last_error(), "PMIx says this task is rank"));
            return 0;
        });
    return sddp_test::all_zero(st) ? 0 : 1;
}

int scenario_tcp_timeout() {
    const int port = sddp_test::free_port();
    const int n = 3;
    auto st = sddp_test::run_ranks(
        n, [&](int r) { return tcp_env(r, n, port); },
        [&](int r) {
            if (r == 2) return 0;  // never calls sddp_init
            sddp_options o = cpu_options(1500);
            sddp_handle* h = nullptr;
            const auto t0 = std::chrono::steady_clock::now();
            const int rc = sddp_init(&o, &h);
            const auto took = std::chrono::steady_clock::now() - t0;
            CHECK(rc == SDDP_ERR_TIMEOUT);
            // Both survivors name the rank that never came (rank 1 hears rank 0's diagnosis),
            // and they waited for it: the error came at the 1.5 s deadline, not at once.
            CHECK(contains(sddp_last_error(), "missing ranks 2"));
            CHECK(took >= std::chrono::milliseconds(1000));
            CHECK(took < std::chrono::seconds(5));
            std::fprintf(stderr, "rank %d got, as expected: %s\n", r, sddp_last_error());
            return 0;
        });
    return sddp_test::all_zero(st) ? 0 : 1;
}

// MASTER_ADDR is a name and DNS never answers (dns_timeout_test.sh runs this in a namespace whose
// resolv.conf points at a UDP socket here that reads nothing): the lookup must end at the
// rendezvous deadline with a message about DNS, not after the resolver's own minutes.
int scenario_dns_timeout() {
    std::FILE* f = std::fopen("/etc/resolv.conf", "r");
    char line[256] = {};
    const bool ours = f && std::fgets(line, sizeof line, f) &&
                      std::strncmp(line, "nameserver 127.0.0.1", 20) == 0;
    if (f) std::fclose(f);
    if (!ours) {
        std::fprintf(stderr,
                     "skip: /etc/resolv.conf is not the test's (run dns_timeout_test.sh)\n");
        return 77;
    }
    const int sink = ::socket(AF_INET, SOCK_DGRAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(53);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (sink < 0 || ::bind(sink, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
        std::perror("bind 127.0.0.1:53");
        return 2;
    }
    auto st = sddp_test::run_ranks(
        1,
        [&](int) {
            return Env{{"RANK", "1"},
                       {"WORLD_SIZE", "2"},
                       {"MASTER_ADDR", "rank0.example.invalid"},
                       {"MASTER_PORT", "12345"},
                       {"SLURM_DDP_ALLOW_UNAUTHENTICATED", "1"},
                       {"RES_OPTIONS", "timeout:30 attempts:3"}};
        },
        [&](int) {
            sddp_options o = cpu_options(2000);
            sddp_handle* h = nullptr;
            const auto t0 = std::chrono::steady_clock::now();
            const int rc = sddp_init(&o, &h);
            const auto took = std::chrono::steady_clock::now() - t0;
            CHECK(rc == SDDP_ERR_TIMEOUT);
            CHECK(contains(sddp_last_error(), "looking up master address 'rank0.example.invalid'"));
            CHECK(contains(sddp_last_error(), "DNS"));
            CHECK(took < std::chrono::milliseconds(4000));
            std::fprintf(stderr, "got, as expected, in %.1f s: %s\n",
                         std::chrono::duration<double>(took).count(), sddp_last_error());
            return 0;
        });
    ::close(sink);
    return sddp_test::all_zero(st) ? 0 : 1;
}

// Errors a user meets before any rendezvous; each in its own process (environment).
int scenario_errors() {
    struct Case {
        Env env;
        int expect;
        std::vector<const char*> mentions;
        sddp_options opts;
    };
    std::vector<Case> cases = {
        {{{"RANK", "5"}, {"WORLD_SIZE", "2"}},
         SDDP_ERR_IDENTITY,
         {"RANK=5", "WORLD_SIZE=2", "identity"},
         cpu_options()},
        {{{"RANK", "1"}}, SDDP_ERR_IDENTITY, {"RANK='1'", "WORLD_SIZE"}, cpu_options()},
        {{{"RANK", "0"}, {"WORLD_SIZE", "2"}},
         SDDP_ERR_IDENTITY,
         {"MASTER_ADDR and MASTER_PORT", "rank 0 of 2"},
         cpu_options()},
        {{{"SLURM_DDP_TIMEOUT", "soon"}},
         SDDP_ERR_INVALID_ARGUMENT,
         {"SLURM_DDP_TIMEOUT='soon'"},
         cpu_options(0)},
        {{{"SLURM_DDP_TRANSPORT", "udp"}},
         SDDP_ERR_INVALID_ARGUMENT,
         {"SLURM_DDP_TRANSPORT='udp'", "tcp"},
         cpu_options()},
        {{{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"SLURM_DDP_TRANSPORT", "pmi2"}},
         SDDP_ERR_UNSUPPORTED,
         {"srun --mpi=pmi2"},
         cpu_options()},
        // No secret and no opt-in: TCP refuses to run unauthenticated, before listening.
        {{{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", "9"}},
         SDDP_ERR_RENDEZVOUS,
         {"SLURM_DDP_SECRET is not set", "SLURM_DDP_ALLOW_UNAUTHENTICATED=1", "srun --ddp"},
         cpu_options()},
        // Launched by srun --ddp (SLURM_DDP_STEP) yet no secret: the likely causes are named.
        {{{"RANK", "0"},
          {"WORLD_SIZE", "2"},
          {"MASTER_ADDR", "127.0.0.1"},
          {"MASTER_PORT", "9"},
          {"SLURM_DDP_STEP", "77.0"}},
         SDDP_ERR_RENDEZVOUS,
         {"SLURM_DDP_SECRET is not set", "SLURM_DDP_STEP='77.0'", "plugstack.conf", "--export"},
         cpu_options()},
        {{{"SLURM_DDP_ALLOW_UNAUTHENTICATED", "yes"}},
         SDDP_ERR_INVALID_ARGUMENT,
         {"SLURM_DDP_ALLOW_UNAUTHENTICATED='yes'"},
         cpu_options()},
        {{{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"SLURM_DDP_TRANSPORT", "pmix"}},
         SDDP_ERR_UNSUPPORTED,
         {"srun --mpi=pmix", "PMIX_NAMESPACE"},
         cpu_options()},
        {{{"RANK", "0"},
          {"WORLD_SIZE", "2"},
          {"PMIX_RANK", "0"},
          {"PMIX_NAMESPACE", "ns"},
          {"PMIX_SERVER_URI4", "x"},
          {"SLURM_DDP_TRANSPORT", "pmix"},
          {"SLURM_DDP_PMIX_LIBRARY", "/nonexistent/libpmix.so.2"}},
         SDDP_ERR_UNSUPPORTED,
         {"/nonexistent/libpmix.so.2", "libpmix2", "SLURM_DDP_TRANSPORT=tcp"},
         cpu_options()},
    };
    sddp_options bad_version = cpu_options();
    bad_version.version = 0;
    cases.push_back({{}, SDDP_ERR_INVALID_ARGUMENT, {"sddp_options_init"}, bad_version});
    int failures = 0;
    for (std::size_t i = 0; i < cases.size(); ++i) {
        auto st = sddp_test::run_ranks(
            1, [&](int) { return cases[i].env; },
            [&](int) {
                sddp_handle* h = reinterpret_cast<sddp_handle*>(0x1);
                const int rc = sddp_init(&cases[i].opts, &h);
                std::fprintf(stderr, "case %zu: %s: %s\n", i, sddp_status_name(rc),
                             sddp_last_error());
                CHECK(rc == cases[i].expect);
                CHECK(h == nullptr);
                CHECK(sddp_last_error_code() == rc);
                for (const char* m : cases[i].mentions) CHECK(contains(sddp_last_error(), m));
                return 0;
            });
        if (!sddp_test::all_zero(st)) ++failures;
    }
    // NULL arguments never crash.
    if (sddp_init(nullptr, nullptr) != SDDP_ERR_INVALID_ARGUMENT) ++failures;
    if (sddp_rank(nullptr) != -1 || sddp_finalize(nullptr) != SDDP_OK) ++failures;
    if (sddp_barrier(nullptr) != SDDP_ERR_INVALID_ARGUMENT) ++failures;
    if (sddp_abort(nullptr, "x") != SDDP_OK) ++failures;
    return failures == 0 ? 0 : 1;
}

// NCCL requested on a machine without a GPU: every rank fails at once, naming the cause.
int scenario_nccl_without_gpu(int n) {
#ifdef SDDP_NCCL_PROGRAMS
    int count = 0;
    if (cudaGetDeviceCount(&count) == cudaSuccess && count > 0) {
        std::printf("a GPU is visible: this scenario is for machines without one\n");
        return 77;
    }
#endif
    const bool have_nccl = sddp_have_nccl() == 1;
    const int expect = have_nccl ? SDDP_ERR_CUDA : SDDP_ERR_UNSUPPORTED;
    const int port = sddp_test::free_port();
    auto st = sddp_test::run_ranks(
        n, [&](int r) { return tcp_env(r, n, port); },
        [&](int r) {
            sddp_options o;
            sddp_options_init(&o);
            o.timeout_ms = 20000;
            sddp_handle* h = nullptr;
            const auto t0 = std::chrono::steady_clock::now();
            const int rc = sddp_init(&o, &h);
            std::fprintf(stderr, "rank %d: %s: %s\n", r, sddp_status_name(rc), sddp_last_error());
            CHECK(rc == expect);
            CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10));
            if (have_nccl) {
                // No GPU, or no driver at all (this build machine): both are named.
                CHECK(contains(sddp_last_error(), "no CUDA device is visible") ||
                      contains(sddp_last_error(), "cudaGetDeviceCount failed"));
                CHECK(contains(sddp_last_error(), "GPU selection"));
            } else {
                // A build without the layer, or a node where NCCL/libcudart do not load.
                CHECK(contains(sddp_last_error(), "without the NCCL layer") ||
                      contains(sddp_last_error(), "libnccl.so.2") ||
                      contains(sddp_last_error(), "libcudart"));
            }
            return 0;
        });
    return sddp_test::all_zero(st) ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s scenario [ranks] [libpmi2]\n", argv[0]);
        return 2;
    }
    const std::string s = argv[1];
    const int n = argc > 2 ? std::atoi(argv[2]) : 2;
    const std::string lib = argc > 3 ? argv[3] : "";
    if (s == "tcp") return scenario_tcp(n);
    if (s == "tcp-nodes") return scenario_tcp_nodes(n);
    if (s == "tcp-opt-in-field") return scenario_tcp_opt_in_field(n);
    if (s == "cpp") return scenario_cpp(n);
    if (s == "pmi2") return scenario_pmi2(n, lib);
    if (s == "pmi2-nodes") return scenario_pmi2_nodes(n, lib);
    if (s == "pmi2-timeout") return scenario_pmi2_timeout(lib);
    if (s == "pmix") return scenario_pmix(n, lib);
    if (s == "pmix-nodes") return scenario_pmix_nodes(n, lib);
    if (s == "pmix-timeout") return scenario_pmix_timeout(lib);
    if (s == "tcp-timeout") return scenario_tcp_timeout();
    if (s == "errors") return scenario_errors();
    if (s == "dns-timeout") return scenario_dns_timeout();
    if (s == "nccl-without-gpu") return scenario_nccl_without_gpu(n);
    std::fprintf(stderr, "unknown scenario %s\n", s.c_str());
    return 2;
}
