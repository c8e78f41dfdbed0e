// SPDX-License-Identifier: Apache-2.0
// The NCCL layer against recording fakes of libnccl.so.2 and libcudart (tests/api/fakes), which
// the layer's own loader picks up through LD_LIBRARY_PATH as it would the real ones: the order
// and arguments of every NCCL call, without a GPU. Pure parts (id roots, poll back-off,
// NCCL_COMM_ID) are checked directly.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>

#include "nccl/nccl_layer.hpp"
#include "nccl/nccl_library.hpp"
#include "nccl/nccl_unique_ids.hpp"
#include "nccl/nccl_wait.hpp"
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
