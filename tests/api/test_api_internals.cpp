// SPDX-License-Identifier: Apache-2.0
// The library's pure parts below the C API: settings, transport choice, the
// PMI2 value codec and the bounded PMI2 worker.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <thread>

#include "api/settings.hpp"
#include "rendezvous/kvs/pmi2_codec.hpp"
#include "rendezvous/kvs/pmi2_transport.hpp"
#include "rendezvous/kvs/pmi2_worker.hpp"
#include "rendezvous/select_transport.hpp"

using namespace sddp;

namespace {
using Vars = std::map<std::string, std::string, std::less<>>;
}

TEST(Settings, Defaults) {
    auto s = api::read_settings(nullptr, map_env({}));
    ASSERT_TRUE(s.ok()) << s.error().message;
    EXPECT_TRUE(s->nccl);
    EXPECT_EQ(s->timeout, std::chrono::milliseconds(300000));
    EXPECT_EQ(s->transport, TransportChoice::automatic);
    EXPECT_EQ(s->unique_ids, 1);
}

TEST(Settings, TimeoutOptionBeatsEnvironment) {
    sddp_options o;
    sddp_options_init(&o);
    auto env = map_env({{"SLURM_DDP_TIMEOUT", "7"}});
    auto s = api::read_settings(&o, env);
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(s->timeout, std::chrono::milliseconds(7000));
    o.timeout_ms = 1234;
    s = api::read_settings(&o, env);
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(s->timeout, std::chrono::milliseconds(1234));
}

TEST(Settings, RejectsBadValues) {
    sddp_options o;
    sddp_options_init(&o);
    o.transport = 7;
    EXPECT_FALSE(api::read_settings(&o, map_env({})).ok());
    sddp_options_init(&o);
    o.master_port = 70000;
    EXPECT_FALSE(api::read_settings(&o, map_env({})).ok());
    sddp_options_init(&o);
    o.timeout_ms = -1;
    EXPECT_FALSE(api::read_settings(&o, map_env({})).ok());
}

TEST(TransportChoice, OptionThenEnvironment) {
    auto env = map_env({{"SLURM_DDP_TRANSPORT", "pmi2"}});
    EXPECT_EQ(*resolve_transport_choice(TransportChoice::automatic, env), TransportChoice::pmi2);
    EXPECT_EQ(*resolve_transport_choice(TransportChoice::tcp, env), TransportChoice::tcp);
    EXPECT_EQ(*resolve_transport_choice(TransportChoice::automatic, map_env({})),
              TransportChoice::automatic);
    auto bad = resolve_transport_choice(TransportChoice::automatic,
                                        map_env({{"SLURM_DDP_TRANSPORT", "TCP "}}));
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().message.find("auto, tcp, pmi2 or pmix"), std::string::npos);
}

TEST(TransportChoice, AutoPicksPmi2UnderSrunMpiPmi2) {
    Vars srun_pmi2{{"PMI_FD", "5"}, {"PMI_RANK", "0"}, {"PMI_SIZE", "4"}, {"SLURM_JOB_ID", "9"}};
    EXPECT_EQ(auto_transport(map_env(srun_pmi2)), TransportChoice::pmi2);
    srun_pmi2.erase("SLURM_JOB_ID");  // hydra's PMI, not Slurm's
    EXPECT_EQ(auto_transport(map_env(srun_pmi2)), TransportChoice::tcp);
    EXPECT_EQ(auto_transport(map_env({})), TransportChoice::tcp);
}

// srun --ddp --mpi=pmi2|pmix gives both ways to meet: TCP, the fastest measured, wins; a PMI
// transport only where TCP lacks its address, port or secret.
TEST(TransportChoice, AutoPrefersTcpWhereTheStepGivesIt) {
    const Vars tcp{{"MASTER_ADDR", "n1"}, {"MASTER_PORT", "12717"}, {"SLURM_DDP_SECRET", "ab"}};
    Vars pmi2{{"PMI_FD", "5"}, {"PMI_RANK", "0"}, {"PMI_SIZE", "4"}, {"SLURM_JOB_ID", "9"}};
    Vars pmix{{"PMIX_RANK", "0"},
              {"PMIX_NAMESPACE", "slurm.pmix.9.0"},
              {"PMIX_SERVER_URI41", "pmix-server.1;tcp4://127.0.0.1:1"},
              {"SLURM_JOB_ID", "9"}};
    for (Vars v : {pmi2, pmix}) {
        EXPECT_NE(auto_transport(map_env(v)), TransportChoice::tcp);
        v.insert(tcp.begin(), tcp.end());
        EXPECT_TRUE(tcp_environment(map_env(v)));
        EXPECT_EQ(auto_transport(map_env(v)), TransportChoice::tcp);
        for (const char* gone : {"MASTER_ADDR", "MASTER_PORT", "SLURM_DDP_SECRET"}) {
            Vars w = v;
            w.erase(gone);
            EXPECT_FALSE(tcp_environment(map_env(w))) << gone;
            EXPECT_NE(auto_transport(map_env(w)), TransportChoice::tcp) << gone;
        }
        Vars opted_in = v;
        opted_in.erase("SLURM_DDP_SECRET");
        opted_in["SLURM_DDP_ALLOW_UNAUTHENTICATED"] = "1";
        EXPECT_EQ(auto_transport(map_env(opted_in)), TransportChoice::tcp);
    }
    EXPECT_EQ(auto_transport(map_env(tcp)), TransportChoice::tcp);
}

TEST(Pmi2Codec, SmallRecordIsOneValue) {
    std::vector<std::uint8_t> b = {0x00, 0xff, 0x10};
    auto v = pmi2::encode_values(b);
    ASSERT_EQ(v.size(), 1u);
    EXPECT_EQ(v[0], "3:00ff10");
    auto f = pmi2::decode_first(v[0], 0);
    ASSERT_TRUE(f.ok());
    EXPECT_EQ(f->total, 3u);
    EXPECT_EQ(f->bytes, b);
}

TEST(Pmi2Codec, LargeRecordIsChunkedWithinValueLimit) {
    std::vector<std::uint8_t> b(1300);
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<std::uint8_t>(i * 7);
    auto v = pmi2::encode_values(b);
    ASSERT_EQ(v.size(), 3u);
    for (const auto& s : v) EXPECT_LE(s.size(), pmi2::kMaxValueChars);
    auto f = pmi2::decode_first(v[0], 1);
    ASSERT_TRUE(f.ok());
    std::vector<std::uint8_t> back = f->bytes;
    for (std::size_t i = 1; i < v.size(); ++i) {
        auto part = pmi2::decode_hex(v[i], 1);
        ASSERT_TRUE(part.ok());
        back.insert(back.end(), part->begin(), part->end());
    }
    EXPECT_EQ(back, b);
    EXPECT_EQ(pmi2::chunk_count(0), 1u);
    EXPECT_EQ(pmi2::encode_values({})[0], "0:");
}

TEST(Pmi2Codec, KeysAreUniqueAndShort) {
    EXPECT_EQ(pmi2::key(3, 17, 0), "sddp.3.17");
    EXPECT_EQ(pmi2::key(3, 17, 2), "sddp.3.17.2");
    EXPECT_LT(pmi2::key(~0ull, 1 << 24, 5000).size(), 64u);  // PMI2_MAX_KEYLEN
}

TEST(Pmi2Codec, RejectsForeignValues) {
    EXPECT_FALSE(pmi2::decode_first("hello", 2).ok());
    EXPECT_FALSE(pmi2::decode_first("3:00ff", 2).ok());     // truncated
    EXPECT_FALSE(pmi2::decode_first("1:zz", 2).ok());       // not hex
    EXPECT_FALSE(pmi2::decode_first("99999999:", 2).ok());  // over the cap
    auto e = pmi2::decode_first("x", 5);
    EXPECT_NE(e.error().message.find("rank 5"), std::string::npos);
}

TEST(Pmi2Worker, ReturnsResults) {
    Pmi2Worker w;
    auto r =
        w.call([] { return 42; }, std::chrono::steady_clock::now() + std::chrono::seconds(5), "x");
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(*r, 42);
}

TEST(Pmi2Worker, BlockedCallTimesOutAndWedges) {
    auto release = std::make_shared<std::atomic<bool>>(false);
    {
        Pmi2Worker w;
        const auto t0 = std::chrono::steady_clock::now();
        auto r = w.call(
            [release] {
                while (!*release) std::this_thread::sleep_for(std::chrono::milliseconds(5));
                return 0;
            },
            t0 + std::chrono::milliseconds(100), "PMI2_KVS_Fence");
        ASSERT_FALSE(r.ok());
        EXPECT_EQ(r.error().code, Errc::timeout);
        EXPECT_NE(r.error().message.find("PMI2_KVS_Fence"), std::string::npos);
        EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
        // Every later call fails at once with the original reason.
        auto again =
            w.call([] { return 0; }, std::chrono::steady_clock::now() + std::chrono::seconds(5),
                   "PMI2_KVS_Get");
        ASSERT_FALSE(again.ok());
        EXPECT_NE(again.error().message.find("PMI2_KVS_Fence"), std::string::npos);
    }                 // destroying a wedged worker detaches the blocked thread instead of hanging
    *release = true;  // let the detached thread finish before the test binary exits
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
}

TEST(Pmi2Environment, NeedsAllOfSlurmsVariables) {
    EXPECT_TRUE(pmi2_environment(
        map_env({{"PMI_FD", "5"}, {"PMI_RANK", "0"}, {"PMI_SIZE", "1"}, {"SLURM_JOB_ID", "1"}})));
    EXPECT_FALSE(pmi2_environment(map_env({{"PMI_RANK", "0"}, {"PMI_SIZE", "1"}})));
}
