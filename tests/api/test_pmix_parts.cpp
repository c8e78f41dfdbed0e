// SPDX-License-Identifier: Apache-2.0
// The PMIx transport's pure parts: key naming, when auto picks PMIx, the forced choice, and the
// declared ABI against the real <pmix.h> where libpmix-dev is installed.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <set>

#include "core/base/env_lookup.hpp"
#include "rendezvous/kvs/pmix_abi.hpp"
#include "rendezvous/kvs/pmix_transport.hpp"
#include "rendezvous/select_transport.hpp"

#ifdef SDDP_HAVE_PMIX_H
#include <pmix.h>
#endif

using namespace sddp;

namespace {
using Vars = std::map<std::string, std::string, std::less<>>;

EnvLookup env_of(const Vars& v) {
    return map_env(v);
}

// What Slurm 22.05's mpi_pmix (PMIx 4) gives every task.
Vars srun_pmix() {
    return {{"PMIX_RANK", "3"},
            {"PMIX_NAMESPACE", "slurm.pmix.12.0"},
            {"PMIX_SERVER_URI41", "pmix-server.1234;tcp4://127.0.0.1:40000"},
            {"PMIX_SERVER_URI4", "pmix-server.1234;tcp4://127.0.0.1:40000"},
            {"SLURM_JOB_ID", "12"}};
}
}  // namespace

TEST(PmixKeys, DistinctPerCollectiveShortAndNotReserved) {
    std::set<std::string> seen;
    for (std::uint64_t seq : {0ull, 1ull, 2ull, 10ull, 11ull, ~0ull}) {
        const std::string k = pmix::key(seq);
        EXPECT_TRUE(seen.insert(k).second) << k;
        EXPECT_LE(k.size(), pmix_abi::kMaxKeyLen);
        EXPECT_NE(k.rfind("pmix", 0), 0u) << k << " uses the prefix PMIx reserves";
    }
    EXPECT_EQ(pmix::key(7), "sddp.7");
}

TEST(PmixEnvironment, NeedsRankNamespaceAndAServerUri) {
    EXPECT_TRUE(pmix_environment(env_of(srun_pmix())));
    for (const char* uri : {"PMIX_SERVER_URI", "PMIX_SERVER_URI2", "PMIX_SERVER_URI21",
                            "PMIX_SERVER_URI3", "PMIX_SERVER_URI4", "PMIX_SERVER_URI41"}) {
        Vars v{{"PMIX_RANK", "0"}, {"PMIX_NAMESPACE", "ns"}, {uri, "x"}};
        EXPECT_TRUE(pmix_environment(env_of(v))) << uri;
    }
    for (const char* gone : {"PMIX_RANK", "PMIX_NAMESPACE"}) {
        Vars v = srun_pmix();
        v.erase(gone);
        EXPECT_FALSE(pmix_environment(env_of(v))) << gone;
    }
    Vars no_server = srun_pmix();
    no_server.erase("PMIX_SERVER_URI41");
    no_server.erase("PMIX_SERVER_URI4");
    EXPECT_FALSE(pmix_environment(env_of(no_server)));
    Vars empty_rank = srun_pmix();
    empty_rank["PMIX_RANK"] = "";
    EXPECT_FALSE(pmix_environment(env_of(empty_rank)));
}

TEST(TransportChoice, AutoPicksPmixUnderSrunMpiPmixAndPmi2First) {
    EXPECT_EQ(auto_transport(env_of(srun_pmix())), TransportChoice::pmix);
    Vars both = srun_pmix();
    both.insert({{"PMI_FD", "5"}, {"PMI_RANK", "3"}, {"PMI_SIZE", "4"}});
    EXPECT_EQ(auto_transport(env_of(both)), TransportChoice::pmi2);
    EXPECT_EQ(*resolve_transport_choice(TransportChoice::automatic,
                                        env_of({{"SLURM_DDP_TRANSPORT", "pmix"}})),
              TransportChoice::pmix);
}

TEST(TransportChoice, ForcedPmixOutsideSrunMpiPmixIsAClearError) {
    RendezvousConfig cfg;
    cfg.world_size = 2;
    auto t = select_transport(TransportChoice::pmix, cfg, env_of({}));
    ASSERT_FALSE(t.ok());
    EXPECT_EQ(t.error().code, Errc::unsupported);
    EXPECT_NE(t.error().message.find("srun --mpi=pmix"), std::string::npos);
    EXPECT_NE(t.error().message.find("PMIX_RANK"), std::string::npos);
}

#ifdef SDDP_HAVE_PMIX_H
// The declarations in pmix_abi.hpp must match the installed library's exactly.
TEST(PmixAbi, MatchesTheInstalledHeader) {
    static_assert(sizeof(pmix_abi::Proc) == sizeof(pmix_proc_t));
    static_assert(offsetof(pmix_abi::Proc, rank) == offsetof(pmix_proc_t, rank));
    static_assert(sizeof(pmix_abi::Value) == sizeof(pmix_value_t));
    static_assert(offsetof(pmix_abi::Value, data) == offsetof(pmix_value_t, data));
    static_assert(sizeof(pmix_abi::Info) == sizeof(pmix_info_t));
    static_assert(offsetof(pmix_abi::Info, flags) == offsetof(pmix_info_t, flags));
    static_assert(offsetof(pmix_abi::Info, value) == offsetof(pmix_info_t, value));
    static_assert(sizeof(pmix_abi::ByteObject) == sizeof(pmix_byte_object_t));
    static_assert(pmix_abi::kMaxNsLen == PMIX_MAX_NSLEN && pmix_abi::kMaxKeyLen == PMIX_MAX_KEYLEN);
    static_assert(pmix_abi::kRankWildcard == PMIX_RANK_WILDCARD);
    static_assert(pmix_abi::kBool == PMIX_BOOL && pmix_abi::kUint32 == PMIX_UINT32 &&
                  pmix_abi::kByteObject == PMIX_BYTE_OBJECT && pmix_abi::kGlobal == PMIX_GLOBAL &&
                  pmix_abi::kSuccess == PMIX_SUCCESS);
    EXPECT_STREQ(pmix_abi::kCollectData, PMIX_COLLECT_DATA);
    EXPECT_STREQ(pmix_abi::kJobSize, PMIX_JOB_SIZE);
}
#else
TEST(PmixAbi, MatchesTheInstalledHeader) {
    GTEST_SKIP() << "pmix.h not installed (libpmix-dev): the declared ABI is not checked";
}
#endif
