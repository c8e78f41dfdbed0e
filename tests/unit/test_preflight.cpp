// SPDX-License-Identifier: Apache-2.0
// Preflight records: encoding, and the checks every rank runs on the all-gathered list.
#include <gtest/gtest.h>

#include <cstdint>

#include "rendezvous/protocol/preflight.hpp"

using namespace sddp;
using Bytes = std::vector<std::uint8_t>;

namespace {

PreflightRecord rec(std::uint32_t rank, const std::string& host, const std::string& bus,
                    std::uint32_t world = 4, const std::string& tag = "77.2") {
    PreflightRecord r;
    r.step_tag = tag;
    r.world_size = world;
    r.rank = rank;
    r.host = host;
    r.pci_bus_id = bus;
    r.cuda_device = bus.empty() ? -1 : static_cast<std::int32_t>(rank % 2);
    return r;
}

std::vector<PreflightRecord> good_world() {
    return {rec(0, "n1", "0000:3b:00.0"), rec(1, "n1", "0000:5e:00.0"),
            rec(2, "n2", "0000:3b:00.0"), rec(3, "n2", "0000:5e:00.0")};
}

void expect_failure(const std::vector<PreflightRecord>& all, const PreflightRecord& mine,
                    std::initializer_list<const char*> mentions) {
    auto st = check_preflight(all, mine);
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.error().code, Errc::invalid_input);
    for (const char* m : mentions) {
        EXPECT_NE(st.error().message.find(m), std::string::npos)
            << "'" << m << "' not in: " << st.error().message;
    }
}

}  // namespace

TEST(Preflight, RoundTrip) {
    auto r = rec(3, "node-with-a-long-name", "0000:3b:00.0");
    r.error = "something failed";
    r.nccl_version = 22809;
    r.nccl_options = "local=1 ids=4";
    auto back = decode_preflight(encode_preflight(r));
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_EQ(*back, r);
    auto cpu = rec(0, "n1", "");
    auto cpu_back = decode_preflight(encode_preflight(cpu));
    ASSERT_TRUE(cpu_back.ok());
    EXPECT_EQ(cpu_back->cuda_device, -1);
}

TEST(Preflight, DecodeRejectsGarbage) {
    auto bytes = encode_preflight(rec(1, "n1", "x"));
    EXPECT_FALSE(decode_preflight({}).ok());
    EXPECT_FALSE(decode_preflight(std::span(bytes).first(bytes.size() - 1)).ok());
    bytes.push_back(0);
    EXPECT_FALSE(decode_preflight(bytes).ok());
    std::vector<std::uint8_t> wrong_version = encode_preflight(rec(1, "n1", "x"));
    wrong_version[0] = 9;
    auto v = decode_preflight(wrong_version);
    ASSERT_FALSE(v.ok());
    EXPECT_NE(v.error().message.find("version 9"), std::string::npos);
    // A length prefix larger than the input must not be trusted.
    std::vector<std::uint8_t> huge = {1, 0xff, 0xff, 0xff, 0xff};
    EXPECT_FALSE(decode_preflight(huge).ok());
}

TEST(Preflight, GoodWorldPasses) {
    auto all = good_world();
    EXPECT_TRUE(check_preflight(all, all[2]).ok());
}

TEST(Preflight, CpuOnlyRanksNeverCollide) {
    std::vector<PreflightRecord> all = {rec(0, "n1", "", 2), rec(1, "n1", "", 2)};
    EXPECT_TRUE(check_preflight(all, all[0]).ok());
}

TEST(Preflight, TwoRanksOnOneGpu) {
    auto all = good_world();
    all[3].pci_bus_id = "0000:3b:00.0";  // rank 3 on rank 2's GPU
    expect_failure(all, all[0],
                   {"ranks 2 and 3", "0000:3b:00.0", "'n2'", "Duplicate GPU detected", "gpu-bind",
                    "fewer tasks per node"});
}

TEST(Preflight, SameBusIdOnDifferentHostsIsFine) {
    auto all = good_world();  // n1 and n2 both have a 0000:3b:00.0
    EXPECT_TRUE(check_preflight(all, all[1]).ok());
}

TEST(Preflight, DifferentWorldSize) {
    auto all = good_world();
    all[1].world_size = 8;
    expect_failure(all, all[0], {"rank 1", "WORLD_SIZE=8", "WORLD_SIZE=4"});
}

TEST(Preflight, AnotherStep) {
    auto all = good_world();
    all[2].step_tag = "77.3";
    expect_failure(all, all[0], {"rank 2", "'77.3'", "'77.2'", "another srun"});
}

TEST(Preflight, WrongRankInSlot) {
    auto all = good_world();
    all[1].rank = 0;  // two processes claim rank 0
    expect_failure(all, all[0], {"slot 1", "rank 0"});
}

TEST(Preflight, MissingRecords) {
    auto all = good_world();
    all.pop_back();
    expect_failure(all, all[0], {"3 ranks answered", "world size is 4"});
}

TEST(Preflight, RankReportedAnError) {
    auto all = good_world();
    all[3].error = "LOCAL_RANK=3 but only 2 CUDA devices are visible";
    expect_failure(all, all[0], {"rank 3 on 'n2'", "LOCAL_RANK=3"});
}

TEST(Preflight, NodeLayoutFromHosts) {
    std::vector<PreflightRecord> all = {rec(0, "b", ""), rec(1, "a", ""), rec(2, "b", ""),
                                        rec(3, "c", "")};
    auto l = node_layout_from_hosts(all);
    EXPECT_EQ(l.num_nodes, 3u);
    EXPECT_EQ(l.node_of_rank, (std::vector<std::uint32_t>{0, 1, 0, 2}));
    EXPECT_EQ(l.local_rank, (std::vector<std::uint32_t>{0, 0, 1, 0}));
    EXPECT_EQ(l.local_world_size, (std::vector<std::uint32_t>{2, 1, 2, 1}));
}

TEST(PreflightVerdict, RoundTripsOkAndErrors) {
    EXPECT_TRUE(decode_verdict(encode_verdict(ok_status())).ok());
    auto all = good_world();
    all[3].error = "no CUDA device is visible";
    const Status bad = check_preflight(all, all[0]);
    ASSERT_FALSE(bad.ok());
    const Status back = decode_verdict(encode_verdict(bad));
    ASSERT_FALSE(back.ok());
    EXPECT_EQ(back.error().code, bad.error().code);
    EXPECT_EQ(back.error().message, bad.error().message);
}

TEST(PreflightVerdict, LongMessageIsCappedNotLost) {
    const Status huge = make_error(Errc::invalid_input, std::string(100000, 'x'));
    const Bytes enc = encode_verdict(huge);
    EXPECT_LT(enc.size(), 5000u);
    const Status back = decode_verdict(enc);
    ASSERT_FALSE(back.ok());
    EXPECT_EQ(back.error().message, std::string(4096, 'x'));
}

TEST(PreflightVerdict, MalformedIsAProtocolError) {
    Bytes good = encode_verdict(make_error(Errc::auth, "nope"));
    std::vector<Bytes> bad = {{}, {1}, {2, 0, 0, 0, 0, 0, 0, 0, 0}};
    Bytes truncated = good;
    truncated.pop_back();
    bad.push_back(truncated);
    Bytes longer = good;
    longer.push_back('!');
    bad.push_back(longer);
    Bytes unknown_code = good;
    unknown_code[4] = 99;  // low byte of the big-endian code
    bad.push_back(unknown_code);
    Bytes ok_with_text = encode_verdict(ok_status());
    ok_with_text[8] = 1;
    ok_with_text.push_back('?');
    bad.push_back(ok_with_text);
    for (const Bytes& b : bad) {
        const Status s = decode_verdict(b);
        ASSERT_FALSE(s.ok());
        EXPECT_EQ(s.error().code, Errc::protocol);
        EXPECT_NE(s.error().message.find("verdict"), std::string::npos);
    }
}

TEST(Preflight, DifferentNcclVersionsNamed) {
    auto all = good_world();
    for (auto& r : all) r.nccl_version = 22809;
    all[3].nccl_version = 22105;
    expect_failure(
        all, all[0],
        {"rank 0 on 'n1' loaded NCCL 2.28.9", "rank 3 on 'n2' loaded NCCL 2.21.5", "one NCCL"});
    all[3].nccl_version = 22809;
    EXPECT_TRUE(check_preflight(all, all[0]).ok());
}

TEST(Preflight, DifferentNcclOptionsNamed) {
    auto all = good_world();
    for (auto& r : all) r.nccl_options = "local=1 ids=1";
    all[2].nccl_options = "local=0 ids=1";
    expect_failure(all, all[1],
                   {"'local=1 ids=1'", "rank 2 on 'n2' for 'local=0 ids=1'", "same sddp_options"});
    all[2].nccl_options = "";  // no_nccl on one rank only
    expect_failure(all, all[1], {"rank 2 on 'n2' for ''"});
}
