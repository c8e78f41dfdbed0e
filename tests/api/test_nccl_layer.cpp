// SPDX-License-Identifier: Apache-2.0
// The NCCL layer against recording fakes of libnccl.so.2 and libcudart (tests/api/fakes), which
// the layer's own loader picks up through LD_LIBRARY_PATH as it would the real ones: the order
// and arguments of every NCCL call, without a GPU. Pure parts (id roots, poll back-off,
// NCCL_COMM_ID) are checked directly.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <sys/stat.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "check/check_gpu.hpp"
#include "nccl/nccl_agreement.hpp"
#include "nccl/nccl_environment.hpp"
#include "nccl/nccl_layer.hpp"
#include "nccl/nccl_library.hpp"
#include "nccl/nccl_unique_ids.hpp"
#include "nccl/nccl_wait.hpp"
#include "nccl_thread_transport.hpp"
#include "rendezvous/self_transport.hpp"

using namespace sddp;
using namespace std::chrono_literals;

namespace {

std::string fake_log() {
    void* h = dlopen("libnccl.so.2", RTLD_NOW | RTLD_NOLOAD);
    if (!h) return "<fake libnccl.so.2 not loaded>";
    auto* log = reinterpret_cast<const char* (*)()>(dlsym(h, "fake_nccl_log"));
    return log ? log() : "<not the fake libnccl.so.2>";
}

void reset(const char* script) {
    ASSERT_TRUE(nccl::load()) << nccl::load().error().message;
    void* h = dlopen("libnccl.so.2", RTLD_NOW | RTLD_NOLOAD);
    ASSERT_NE(h, nullptr);
    auto* r = reinterpret_cast<void (*)()>(dlsym(h, "fake_nccl_reset"));
    ASSERT_NE(r, nullptr) << "the test must run with the fakes on LD_LIBRARY_PATH";
    r();
    if (script)
        setenv("FAKE_NCCL", script, 1);
    else
        unsetenv("FAKE_NCCL");
}

// Buffers and streams the fake CUDA runtime has handed out and not had back.
int cuda_live() {
    auto api = nccl::cuda_api();
    if (!api) return -1;
    void* lib = dlopen((*api)->path.c_str(), RTLD_NOW | RTLD_NOLOAD);
    auto* f = lib ? reinterpret_cast<int (*)()>(dlsym(lib, "fake_cuda_live")) : nullptr;
    return f ? f() : -1;
}

// Position of `line` in the log (npos if absent), for order checks.
std::size_t at(const std::string& log, const std::string& line) {
    const std::string l = "\n" + log;
    const std::size_t p = l.find("\n" + line + "\n");
    return p;
}

nccl::CommParams one_rank(std::chrono::milliseconds timeout = 5s) {
    nccl::CommParams p;
    p.timeout = timeout;
    return p;
}

// create_comms on `n` ranks (threads); setup_error_rank's device "failed". Each rank's result
// (error text, or "" for success, its communicators finalised).
std::vector<std::string> create_on_threads(int n, int setup_error_rank = -1) {
    auto hub = std::make_shared<sddp_test::ThreadHub>(n);
    std::vector<std::string> out(static_cast<std::size_t>(n));
    std::vector<std::thread> ts;
    for (int r = 0; r < n; ++r) {
        ts.emplace_back([&, r] {
            sddp_test::ThreadTransport t(hub, r);
            nccl::CommParams p;
            p.rank = r;
            p.world_size = n;
            p.host = "h" + std::to_string(r);
            p.timeout = 5s;
            if (r == setup_error_rank)
                p.setup_error = make_error(Errc::io, "cudaSetDevice(3) failed: invalid ordinal");
            auto c = nccl::create_comms(t, p);
            if (c) {
                (void)(*c)->finalize(5s);
            } else {
                out[static_cast<std::size_t>(r)] = c.error().message;
            }
        });
    }
    for (auto& t : ts) t.join();
    return out;
}

}  // namespace

TEST(NcclLoading, FindsTheLibraryAndItsVersion) {
    ASSERT_TRUE(nccl::load()) << nccl::load().error().message;
    EXPECT_EQ(nccl::version(), 22809);
    auto api = nccl::nccl_api();
    ASSERT_TRUE(api);
    EXPECT_NE((*api)->path.find("fakes"), std::string::npos) << (*api)->path;
}

TEST(NcclLoading, VersionCheck) {
    EXPECT_EQ(nccl::version_text(22809), "2.28.9");
    EXPECT_EQ(nccl::version_text(2804), "2.8.4");
    EXPECT_TRUE(nccl::check_nccl_version(21800, "x"));
    auto old = nccl::check_nccl_version(21703, "/opt/torch/libnccl.so.2");
    ASSERT_FALSE(old);
    EXPECT_EQ(old.error().code, Errc::unsupported);
    EXPECT_NE(old.error().message.find("NCCL 2.17.3 at /opt/torch/libnccl.so.2 is too old"),
              std::string::npos)
        << old.error().message;
}

namespace {

const std::string kBuiltRuntime = "libcudart.so." + std::to_string(CUDART_VERSION / 1000);
const std::string kPrevRuntime = "libcudart.so." + std::to_string(SDDP_FAKE_CUDART_PREV);

int major_of(const nccl::CudaApi& api) {
    void* h = dlopen(api.path.c_str(), RTLD_NOW | RTLD_NOLOAD);
    auto* f = h ? reinterpret_cast<int (*)()>(dlsym(h, "fake_cudart_major")) : nullptr;
    return f ? f() : -1;
}

bool loaded(const std::string& soname) {
    return dlopen(soname.c_str(), RTLD_NOW | RTLD_NOLOAD) != nullptr;
}

}  // namespace

TEST(CudaRuntime, SonameOrderStartsWithTheBuiltMajor) {
    EXPECT_EQ(
        nccl::cudart_sonames(13),
        (std::vector<std::string>{"libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0"}));
    EXPECT_EQ(
        nccl::cudart_sonames(12),
        (std::vector<std::string>{"libcudart.so.12", "libcudart.so.13", "libcudart.so.11.0"}));
}

// A runtime newer than the driver answers "insufficient driver": the next major is used.
TEST(CudaRuntime, InsufficientDriverFallsBackToTheNextMajor) {
    if (loaded(kBuiltRuntime) || loaded(kPrevRuntime))
        GTEST_SKIP() << "a runtime is loaded already (run this test in a process of its own)";
    setenv("FAKE_CUDA_DRIVER_MAJOR", std::to_string(SDDP_FAKE_CUDART_PREV).c_str(), 1);
    auto api = nccl::load_cuda_runtime({kBuiltRuntime, kPrevRuntime});
    ASSERT_TRUE(api) << api.error().message;
    EXPECT_EQ(major_of(*api), SDDP_FAKE_CUDART_PREV) << api->path;
    // No runtime old enough (or no driver): the preferred one, whose insufficient-driver error
    // GPU selection then explains.
    setenv("FAKE_CUDA_DRIVER_MAJOR", "1", 1);
    auto none = nccl::load_cuda_runtime({kBuiltRuntime, kPrevRuntime});
    unsetenv("FAKE_CUDA_DRIVER_MAJOR");
    ASSERT_TRUE(none) << none.error().message;
    EXPECT_EQ(major_of(*none), CUDART_VERSION / 1000) << none->path;
}

// The runtime the process already holds (PyTorch cu12's) wins over the one this was built with.
TEST(CudaRuntime, TheRuntimeAlreadyInTheProcessFirst) {
    if (loaded(kBuiltRuntime) || loaded(kPrevRuntime))
        GTEST_SKIP() << "a runtime is loaded already (run this test in a process of its own)";
    ASSERT_NE(dlopen(kPrevRuntime.c_str(), RTLD_NOW | RTLD_LOCAL), nullptr) << dlerror();
    auto api = nccl::load_cuda_runtime(nccl::cudart_sonames(CUDART_VERSION / 1000));
    ASSERT_TRUE(api) << api.error().message;
    EXPECT_EQ(major_of(*api), SDDP_FAKE_CUDART_PREV) << api->path;
    EXPECT_FALSE(loaded(kBuiltRuntime)) << "a second runtime was loaded";
}

TEST(NcclComms, HandsOutBlockingChildrenOfANonBlockingParent) {
    reset(nullptr);
    auto t = make_self_transport();
    auto c = nccl::create_comms(*t, one_rank());
    ASSERT_TRUE(c) << c.error().message;
    const std::string log = fake_log();
    // The parent: non-blocking, bounded init.
    EXPECT_NE(at(log, "init c1 n=1 r=0 blocking=0"), std::string::npos) << log;
    // The world and local communicators: blocking children sharing the parent's resources.
    EXPECT_NE(at(log, "split c1 color=0 key=0"), std::string::npos) << log;
    EXPECT_NE(at(log, "  -> c2 blocking=1 share=1"), std::string::npos) << log;
    EXPECT_NE(at(log, "  -> c3 blocking=1 share=1"), std::string::npos) << log;
    ASSERT_NE((*c)->world(), nullptr);
    ASSERT_NE((*c)->local(), nullptr);
    EXPECT_NE((*c)->world(), (*c)->local());
    // Each split waited on the parent, then on the child NCCL wrote afterwards.
    EXPECT_LT(at(log, "  -> c3 blocking=1 share=1"), at(log, "poll c3")) << log;
    EXPECT_NE(at(log, "poll c2"), std::string::npos) << log;
    // A user's own split of the world communicator shares nothing with it.
    auto api = nccl::nccl_api();
    ASSERT_TRUE(api);
    ncclComm_t mine = nullptr;
    ncclConfig_t plain = NCCL_CONFIG_INITIALIZER;
    ASSERT_EQ((*api)->CommSplit(static_cast<ncclComm_t>((*c)->world()), 0, 0, &mine, &plain),
              ncclSuccess);
    EXPECT_NE(at(fake_log(), "  -> c4 blocking=1 share=0"), std::string::npos) << fake_log();
    (void)(*api)->CommDestroy(mine);
    ASSERT_TRUE((*c)->finalize(5s));
}

TEST(NcclComms, WithoutLocalCommunicatorOneChild) {
    reset(nullptr);
    auto t = make_self_transport();
    auto p = one_rank();
    p.local_comm = false;
    auto c = nccl::create_comms(*t, p);
    ASSERT_TRUE(c) << c.error().message;
    EXPECT_NE((*c)->world(), nullptr);
    EXPECT_EQ((*c)->local(), nullptr);
    ASSERT_TRUE((*c)->finalize(5s));
}

TEST(NcclComms, FinalizeChildrenFirstAndPollsTheParent) {
    reset(nullptr);
    auto t = make_self_transport();
    auto c = nccl::create_comms(*t, one_rank());
    ASSERT_TRUE(c) << c.error().message;
    reset(nullptr);
    ASSERT_TRUE((*c)->finalize(5s));
    const std::string log = fake_log();
    const auto f3 = at(log, "finalize c3"), f2 = at(log, "finalize c2"),
               f1 = at(log, "finalize c1");
    ASSERT_NE(f1, std::string::npos) << log;
    EXPECT_LT(f3, f2) << log;
    EXPECT_LT(f2, f1) << log;
    // Readiness polled before finalize, and the non-blocking finalize polled before destroy.
    EXPECT_LT(at(log, "poll c1"), f1) << log;
    const std::string after = log.substr(f1);
    EXPECT_LT(at(after, "poll c1"), at(after, "destroy c1")) << log;
    EXPECT_EQ(log.find("abort"), std::string::npos) << log;
}

TEST(NcclComms, SplitTimeoutAbortsParentThenTheChild) {
    reset("split_hang");
    auto t = make_self_transport();
    const auto t0 = std::chrono::steady_clock::now();
    auto c = nccl::create_comms(*t, one_rank(300ms));
    const auto took = std::chrono::steady_clock::now() - t0;
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().code, Errc::timeout) << c.error().message;
    EXPECT_NE(c.error().message.find("ncclCommSplit"), std::string::npos) << c.error().message;
    EXPECT_LT(took, 2s);
    const std::string log = fake_log();
    const auto a1 = at(log, "abort c1"), a2 = at(log, "abort c2");
    ASSERT_NE(a1, std::string::npos) << log;
    ASSERT_NE(a2, std::string::npos) << "the child of a timed-out split leaked\n" << log;
    EXPECT_LT(a1, a2) << log;
}

TEST(NcclComms, DestroyFailureAborts) {
    reset(nullptr);
    auto t = make_self_transport();
    auto p = one_rank();
    p.local_comm = false;
    auto c = nccl::create_comms(*t, p);
    ASSERT_TRUE(c) << c.error().message;
    reset("destroy_fail");
    auto s = (*c)->finalize(5s);
    ASSERT_FALSE(s);
    EXPECT_NE(s.error().message.find("ncclCommDestroy failed"), std::string::npos);
    const std::string log = fake_log();
    EXPECT_LT(at(log, "destroy c2"), at(log, "abort c2")) << log;
    EXPECT_NE(at(log, "abort c1"), std::string::npos) << log;  // the parent too
    unsetenv("FAKE_NCCL");
}

TEST(NcclComms, FinalizeTimeoutAborts) {
    reset(nullptr);
    auto t = make_self_transport();
    auto c = nccl::create_comms(*t, one_rank());
    ASSERT_TRUE(c) << c.error().message;
    reset("finalize_hang");
    const auto t0 = std::chrono::steady_clock::now();
    auto s = (*c)->finalize(300ms);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().code, Errc::timeout);
    EXPECT_NE(at(fake_log(), "abort c1"), std::string::npos) << fake_log();
    unsetenv("FAKE_NCCL");
}

TEST(NcclComms, InitFailureIsNamed) {
    reset("init_fail");
    auto t = make_self_transport();
    auto c = nccl::create_comms(*t, one_rank());
    ASSERT_FALSE(c);
    EXPECT_NE(c.error().message.find("ncclCommInitRankConfig"), std::string::npos);
    EXPECT_NE(c.error().message.find("fake last error"), std::string::npos) << c.error().message;
    unsetenv("FAKE_NCCL");
}

TEST(NcclComms, CommIdWithSeveralIdsRefused) {
    EXPECT_TRUE(nccl::check_comm_id(std::nullopt, 4));
    EXPECT_TRUE(nccl::check_comm_id(std::string("10.0.0.1:5000"), 1));
    auto s = nccl::check_comm_id(std::string("10.0.0.1:5000"), 4);
    ASSERT_FALSE(s);
    EXPECT_NE(s.error().message.find("NCCL_COMM_ID='10.0.0.1:5000'"), std::string::npos)
        << s.error().message;
    EXPECT_NE(s.error().message.find("Unset NCCL_COMM_ID"), std::string::npos);
}

// NCCL_COMM_BLOCKING overrides both configs inside NCCL (the fake does as NCCL's
// envConfigOverride): refused before init on every value NCCL would apply.
TEST(NcclComms, CommBlockingInTheEnvironmentIsRefused) {
    for (const char* v : {"1", "0", "0x1", "1 "}) {
        reset(nullptr);
        setenv("NCCL_COMM_BLOCKING", v, 1);
        auto t = make_self_transport();
        auto p = one_rank();
        p.nccl_comm_blocking = v;
        auto c = nccl::create_comms(*t, p);
        unsetenv("NCCL_COMM_BLOCKING");
        ASSERT_FALSE(c) << v << ": " << fake_log();
        EXPECT_EQ(c.error().code, Errc::invalid_input);
        EXPECT_NE(c.error().message.find(std::string("NCCL_COMM_BLOCKING='") + v + "'"),
                  std::string::npos)
            << c.error().message;
        EXPECT_NE(c.error().message.find("unset NCCL_COMM_BLOCKING"), std::string::npos)
            << c.error().message;
        EXPECT_EQ(fake_log().find("init c"), std::string::npos) << fake_log();
    }
    EXPECT_NE(nccl::check_comm_blocking("0").error().message.find("ncclInProgress"),
              std::string::npos);
    // Values NCCL ignores change nothing.
    for (const char* v : {"", "yes", "2", "-1"}) {
        EXPECT_FALSE(nccl::comm_blocking_override(std::string(v))) << v;
        EXPECT_TRUE(nccl::check_comm_blocking(std::string(v))) << v;
    }
    EXPECT_TRUE(nccl::check_comm_blocking(std::nullopt));
}

TEST(NcclIds, RootsFollowNcclGrouping) {
    // NCCL gives id i the ranks from i*(W/n) + min(i, W%n): its first rank creates the id.
    EXPECT_EQ(nccl::id_root(0, 4, 10), 0);
    EXPECT_EQ(nccl::id_root(1, 4, 10), 3);
    EXPECT_EQ(nccl::id_root(2, 4, 10), 6);
    EXPECT_EQ(nccl::id_root(3, 4, 10), 8);
    EXPECT_EQ(nccl::id_root(1, 2, 8), 4);  // W % n == 0: evenly spread
    for (int w = 1; w < 70; ++w) {
        for (int n = 1; n <= w; ++n) {
            int covered = 0;  // the groups tile 0..W-1 in order
            for (int i = 0; i < n; ++i) {
                const int size = w / n + (i < w % n ? 1 : 0);
                ASSERT_EQ(nccl::id_root(i, n, w), covered) << w << " " << n << " " << i;
                covered += size;
            }
            ASSERT_EQ(covered, w);
        }
    }
}

TEST(NcclWait, BackOffCappedNearOneMillisecond) {
    std::chrono::microseconds p{0}, longest{0};
    for (int i = 0; i < 40; ++i) {
        p = nccl::next_poll_pause(p);
        longest = std::max(longest, p);
        EXPECT_GT(p.count(), 0);
    }
    EXPECT_LE(longest, 1000us);
    EXPECT_GE(longest, 500us);  // not a busy loop either
}

TEST(CudaGpu, PlainGpusPerTaskUsesItsOnlyDevice) {
    setenv("FAKE_CUDA_DEVICES", "1", 1);
    unsetenv("FAKE_CUDA_ERROR");
    DeviceChoiceInput in;
    in.local_rank = 1;
    in.local_world_size = 2;
    in.slurm.task_visible = "1";
    in.slurm.task_gpus = "1";
    in.slurm.gpus_on_node = "2";
    auto g = nccl::select_gpu(in);
    ASSERT_TRUE(g) << g.error().message;
    EXPECT_EQ(g->device, 0);
    EXPECT_EQ(g->pci_bus_id, "0000:3b:00.0");
}

TEST(CudaGpu, FabricManagerHint) {
    setenv("FAKE_CUDA_ERROR", "802", 1);  // cudaErrorSystemNotReady
    auto g = nccl::select_gpu(DeviceChoiceInput{});
    unsetenv("FAKE_CUDA_ERROR");
    ASSERT_FALSE(g);
    EXPECT_NE(g.error().message.find("cudaErrorSystemNotReady"), std::string::npos);
    EXPECT_NE(g.error().message.find("fabric manager"), std::string::npos) << g.error().message;
    EXPECT_EQ(g.error().message.find("driver is missing"), std::string::npos);
}

// One rank's device failed before init: every rank stops before NCCL, naming that rank.
TEST(NcclAgreement, SetupFailureBeforeInitStopsEveryRank) {
    reset(nullptr);
    const auto out = create_on_threads(3, 1);
    for (int r = 0; r < 3; ++r) {
        const auto& m = out[static_cast<std::size_t>(r)];
        EXPECT_NE(m.find("failed on rank 1 (host h1): cudaSetDevice(3) failed"), std::string::npos)
            << "rank " << r << ": " << m;
    }
    // Nobody reached NCCL: no rank polls an init its peer will never join.
    EXPECT_EQ(fake_log().find("init c"), std::string::npos) << fake_log();
}

// One rank's ncclCommInitRankConfig fails: every rank returns that rank's reason.
TEST(NcclAgreement, InitFailureOnOneRankIsEveryRanksError) {
    reset("init_fail");
    setenv("FAKE_NCCL_FAIL_RANK", "2", 1);
    const auto out = create_on_threads(3);
    unsetenv("FAKE_NCCL_FAIL_RANK");
    unsetenv("FAKE_NCCL");
    for (int r = 0; r < 3; ++r) {
        const auto& m = out[static_cast<std::size_t>(r)];
        EXPECT_NE(m.find("NCCL init failed on rank 2 (host h2): ncclCommInitRankConfig"),
                  std::string::npos)
            << "rank " << r << ": " << m;
        EXPECT_NE(m.find("fake last error"), std::string::npos) << m;
    }
    // The ranks whose init succeeded aborted their communicators.
    EXPECT_NE(fake_log().find("abort c"), std::string::npos) << fake_log();
}

TEST(NcclAgreement, HealthyRanksAgree) {
    reset(nullptr);
    for (const auto& m : create_on_threads(3)) EXPECT_EQ(m, "");
}

TEST(NcclAgreement, VerdictPrefersARealFailureToTimeouts) {
    const std::vector<Bytes> all{nccl::encode_outcome(make_error(Errc::timeout, "waited"), "a"),
                                 nccl::encode_outcome(ok_status(), "b"),
                                 nccl::encode_outcome(make_error(Errc::io, "bad GPU"), "c"),
                                 nccl::encode_outcome(make_error(Errc::io, "also bad"), "d")};
    auto v = nccl::judge_outcomes(all, "NCCL init");
    ASSERT_FALSE(v);
    EXPECT_EQ(v.error().code, Errc::io);
    EXPECT_EQ(v.error().message,
              "NCCL init failed on rank 2 (host c): bad GPU (2 other rank(s) failed too)");
    EXPECT_TRUE(nccl::judge_outcomes({nccl::encode_outcome(ok_status(), "a")}, "x"));
    auto only_timeouts =
        nccl::judge_outcomes({nccl::encode_outcome(ok_status(), "a"),
                              nccl::encode_outcome(make_error(Errc::timeout, "waited"), "b")},
                             "x");
    ASSERT_FALSE(only_timeouts);
    EXPECT_EQ(only_timeouts.error().code, Errc::timeout);
    EXPECT_NE(only_timeouts.error().message.find("rank 1 (host b)"), std::string::npos);
    EXPECT_FALSE(nccl::judge_outcomes({Bytes{7}}, "x"));  // not an outcome
}

// Waits up to 3 s for `line` to appear in the fake's log (a detached thread writes it).
static bool log_shows(const std::string& line) {
    for (int i = 0; i < 300; ++i) {
        if (at(fake_log(), line) != std::string::npos) return true;
        std::this_thread::sleep_for(10ms);
    }
    return false;
}

// A blocking child's ncclCommFinalize that never returns (an operation queued on it never
// completes) is bounded, and the communicator is never aborted under the thread still inside
// ncclCommFinalize: the parent's abort (shared abort flag) makes it return, and that thread
// aborts it then.
TEST(NcclComms, BlockedFinalizeIsAbortedAtTheDeadline) {
    reset(nullptr);
    auto t = make_self_transport();
    auto c = nccl::create_comms(*t, one_rank());
    ASSERT_TRUE(c) << c.error().message;
    reset("finalize_block");
    const auto t0 = std::chrono::steady_clock::now();
    auto s = (*c)->finalize(300ms);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 3s);
    unsetenv("FAKE_NCCL");
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().code, Errc::timeout);
    EXPECT_NE(s.error().message.find("ncclCommFinalize did not return"), std::string::npos)
        << s.error().message;
    ASSERT_TRUE(log_shows("abort c3")) << fake_log();
    const std::string log = fake_log();
    EXPECT_EQ(log.find("under a running call"), std::string::npos) << log;
    EXPECT_LT(at(log, "abort c1"), at(log, "finalize c3 returned")) << log;
    EXPECT_LT(at(log, "finalize c3 returned"), at(log, "abort c3")) << log;
}

// The check's all-reduce blocked inside NCCL past its deadline is reported, and the caller is
// told not to touch the communicator while that thread is there.
TEST(NcclSelfTest, AllReduceBlockedInsideNcclIsLeftToItsThread) {
    reset(nullptr);
    auto t = make_self_transport();
    auto c = nccl::create_comms(*t, one_rank());
    ASSERT_TRUE(c) << c.error().message;
    setenv("FAKE_NCCL", "allreduce_block", 1);
    bool inside = false;
    const auto t0 = std::chrono::steady_clock::now();
    auto r = nccl::check_allreduce((*c)->world(), 0, 0, 1, 200ms, &inside);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 3s);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, Errc::timeout);
    EXPECT_TRUE(inside);
    // What the process's exit (or another communicator's abort) does: the call returns; only
    // then is the communicator the caller's to abort.
    void* h = dlopen("libnccl.so.2", RTLD_NOW | RTLD_NOLOAD);
    auto* unblock = reinterpret_cast<void (*)()>(dlsym(h, "fake_nccl_unblock"));
    ASSERT_NE(unblock, nullptr);
    unblock();
    ASSERT_TRUE(log_shows("allreduce c2 returned")) << fake_log();
    unsetenv("FAKE_NCCL");
    std::this_thread::sleep_for(50ms);  // the worker's own cleanup after the call
    (*c)->abort();
    EXPECT_EQ(fake_log().find("under a running call"), std::string::npos) << fake_log();
    // A call that returns in time leaves the communicator to the caller.
    auto again = nccl::create_comms(*t, one_rank());
    ASSERT_TRUE(again) << again.error().message;
    inside = true;
    ASSERT_TRUE(nccl::check_allreduce((*again)->world(), 0, 0, 1, 5s, &inside));
    EXPECT_FALSE(inside);
    (*again)->abort();
}

TEST(NcclSelfTest, AllReduceSumIsChecked) {
    reset(nullptr);
    auto t = make_self_transport();
    auto c = nccl::create_comms(*t, one_rank());
    ASSERT_TRUE(c) << c.error().message;
    auto ok = nccl::check_allreduce((*c)->world(), 0, 0, 1, 5s);
    ASSERT_TRUE(ok) << ok.error().message;
    EXPECT_EQ(ok->got, 1);
    EXPECT_EQ(ok->expected, 1);
    EXPECT_NE(at(fake_log(), "allreduce c2 count=1 type=" + std::to_string(ncclInt64) +
                                 " op=" + std::to_string(ncclSum)),
              std::string::npos)
        << fake_log();

    setenv("FAKE_NCCL", "allreduce_wrong", 1);
    auto wrong = nccl::check_allreduce((*c)->world(), 0, 0, 1, 5s);
    ASSERT_FALSE(wrong);
    EXPECT_NE(wrong.error().message.find("the all-reduce returned 0, not 1"), std::string::npos)
        << wrong.error().message;

    setenv("FAKE_NCCL", "allreduce_hang", 1);
    const auto t0 = std::chrono::steady_clock::now();
    auto hung = nccl::check_allreduce((*c)->world(), 0, 0, 1, 300ms);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 3s);
    unsetenv("FAKE_NCCL");
    ASSERT_FALSE(hung);
    EXPECT_EQ(hung.error().code, Errc::timeout);
    EXPECT_NE(hung.error().message.find("did not complete within 0.3 s"), std::string::npos)
        << hung.error().message;
    (*c)->abort();
}

// A failed all-reduce gives its buffer and stream back; one still in flight keeps them.
TEST(NcclSelfTest, FailureFreesTheBufferAndTheStream) {
    reset(nullptr);
    auto t = make_self_transport();
    auto c = nccl::create_comms(*t, one_rank());
    ASSERT_TRUE(c) << c.error().message;
    const int before = cuda_live();
    ASSERT_GE(before, 0) << "not the fake CUDA runtime";
    setenv("FAKE_NCCL", "allreduce_fail", 1);
    auto failed = nccl::check_allreduce((*c)->world(), 0, 0, 1, 5s);
    unsetenv("FAKE_NCCL");
    ASSERT_FALSE(failed);
    EXPECT_NE(failed.error().message.find("ncclAllReduce failed"), std::string::npos)
        << failed.error().message;
    EXPECT_EQ(cuda_live(), before);
    auto ok = nccl::check_allreduce((*c)->world(), 0, 0, 1, 5s);
    ASSERT_TRUE(ok) << ok.error().message;
    EXPECT_EQ(cuda_live(), before);
    (*c)->abort();
}

TEST(CudaGpu, BusIdOfAnIndexAndOfAUuidAreOne) {
    setenv("FAKE_CUDA_DEVICES", "1", 1);
    setenv("CUDA_VISIBLE_DEVICES", "1", 1);
    auto by_index = nccl::pci_bus_id(0);
    setenv("CUDA_VISIBLE_DEVICES", "GPU-fake-1", 1);
    auto by_uuid = nccl::pci_bus_id(0);
    unsetenv("CUDA_VISIBLE_DEVICES");
    ASSERT_TRUE(by_index) << by_index.error().message;
    ASSERT_TRUE(by_uuid) << by_uuid.error().message;
    EXPECT_EQ(*by_index, "0000:3b:01.0");
    EXPECT_EQ(*by_uuid, *by_index);
}

namespace {

CheckRecord on(std::uint32_t rank, const std::string& host) {
    CheckRecord r;
    r.rank = rank;
    r.host = host;
    r.gpu = "0";
    return r;
}

}  // namespace

// Device files the test controls: one that opens, one that does not (a directory stands in for
// a GPU the device cgroup denies: root opens any plain file).
// The check picks the GPU by the library's own rule: under --gpus-per-task=1 task 1 sees only
// its own GPU and uses index 0 (not LOCAL_RANK=1, which does not exist there).
TEST(CheckGpu, DeviceIsTheLibrarysChoice) {
    Identity id;
    id.local_rank = 1;
    id.local_world_size = 4;
    id.locality_known = true;
    auto per_task = check::check_device(id, map_env({{"CUDA_VISIBLE_DEVICES", "1"},
                                                     {"SLURM_STEP_GPUS", "1"},
                                                     {"SLURM_GPUS_ON_NODE", "4"}}));
    ASSERT_TRUE(per_task) << per_task.error().message;
    EXPECT_EQ(*per_task, 0);
    // Not narrowed (--gres=gpu:4): LOCAL_RANK indexes the list.
    auto gres = check::check_device(id, map_env({{"CUDA_VISIBLE_DEVICES", "0,1,2,3"},
                                                 {"SLURM_STEP_GPUS", "0,1,2,3"},
                                                 {"SLURM_GPUS_ON_NODE", "4"}}));
    ASSERT_TRUE(gres) << gres.error().message;
    EXPECT_EQ(*gres, 1);
    // srun --ddp said which.
    id.device = 3;
    auto ddp = check::check_device(id, map_env({{"CUDA_VISIBLE_DEVICES", "1,0,2,3"}}));
    ASSERT_TRUE(ddp) << ddp.error().message;
    EXPECT_EQ(*ddp, 3);
    // More tasks than GPUs: the library's error, not a guess.
    id.device.reset();
    auto crowded = check::check_device(id, map_env({{"CUDA_VISIBLE_DEVICES", "0"},
                                                    {"SLURM_STEP_GPUS", "0"},
                                                    {"SLURM_GPUS_ON_NODE", "1"}}));
    ASSERT_FALSE(crowded);
    EXPECT_NE(crowded.error().message.find("4 tasks of this step run on this node"),
              std::string::npos)
        << crowded.error().message;
}

TEST(CheckGpu, DeviceFilesThatDoNotOpenAreBlocked) {
    char tmpl[] = "/tmp/sddp-devs.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    const std::string dir = tmpl;
    std::ofstream(dir + "/nvidia0") << "";
    ASSERT_EQ(mkdir((dir + "/nvidia1").c_str(), 0700), 0);
    std::ofstream(dir + "/nvidiactl") << "";  // not a GPU
    check::GpuFacts f;
    check::probe_device_files(dir, f);
    EXPECT_EQ(f.opened, std::vector<int>{0});
    ASSERT_EQ(f.blocked.size(), 1u);
    EXPECT_EQ(f.blocked[0].rfind(dir + "/nvidia1: ", 0), 0u) << f.blocked[0];
    std::filesystem::remove_all(dir);
}

TEST(CheckGpu, IsolatedTasksOfANodeGiveOneWarning) {
    const std::vector<CheckRecord> recs{on(0, "n1"), on(1, "n1"), on(2, "n2"), on(3, "n2")};
    std::vector<check::GpuFacts> f(4);
    for (auto& x : f) x.uses_gpu = true;
    EXPECT_TRUE(check::isolation_warnings(recs, f).empty());
    f[1].blocked = {"/dev/nvidia0: Operation not permitted"};
    const auto w = check::isolation_warnings(recs, f);
    ASSERT_EQ(w.size(), 1u);
    EXPECT_EQ(w[0].rfind("node n1: ", 0), 0u) << w[0];
    EXPECT_NE(w[0].find("rank 1 cannot open /dev/nvidia0: Operation not permitted"),
              std::string::npos)
        << w[0];
    EXPECT_NE(w[0].find("--gres-flags=allow-task-sharing"), std::string::npos);
    // One GPU task on the node: nothing to share with, nothing to warn about.
    EXPECT_TRUE(check::isolation_warnings({on(0, "n1"), on(1, "n2")},
                                          {f[1], check::GpuFacts{true, {}, {}, "", ""}})
                    .empty());
}

TEST(CheckGpu, FactsRoundTripAndNcclProblemsNameTheRank) {
    check::GpuFacts f{true,
                      {0, 1},
                      {"/dev/nvidia2: Operation not permitted"},
                      "failed",
                      "the all-reduce returned 9, not 10"};
    const auto bytes = check::encode_gpu_facts(f);
    ASSERT_EQ(bytes.size(), check::kGpuFactsBytes);
    EXPECT_EQ(check::decode_gpu_facts(bytes), f);
    const auto ps = check::nccl_problems({on(0, "n1"), on(1, "n2")}, {check::GpuFacts{}, f});
    ASSERT_EQ(ps.size(), 1u);
    EXPECT_EQ(ps[0].where, "rank 1 on n2");
    EXPECT_NE(ps[0].seen.find("returned 9, not 10"), std::string::npos);
    EXPECT_NE(
        check::nccl_lines({on(1, "n2")}, {f}).find("nccl: rank 1 on n2 (GPU 0): all-reduce FAILED"),
        std::string::npos);
}
