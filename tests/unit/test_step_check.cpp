// SPDX-License-Identifier: Apache-2.0
// `slurm-ddp check`: record encoding and the verdict on a step's gathered records.
#include <gtest/gtest.h>

#include <cstdint>

#include "core/check/check_record.hpp"
#include "core/check/check_report.hpp"
#include "core/check/check_verdict.hpp"

using namespace sddp;

namespace {

CheckRecord healthy(std::uint32_t rank, const std::string& host, const std::string& addr) {
    CheckRecord r;
    r.rank = rank;
    r.world_size = 4;
    r.node_rank = host == "n1" ? 0 : 1;
    r.host = host;
    r.host_address = addr;
    r.master_addr = "n1";
    r.master_port = 29500;
    r.master_address = "10.0.0.1";
    r.interface = "eth0";
    r.gpu = std::to_string(rank % 2) + " (/dev/nvidia" + std::to_string(rank % 2) + ")";
    r.gpu_key = "/dev/nvidia" + std::to_string(rank % 2);
    r.versions = "libslurm_ddp 0.1.0, driver none";
    return r;
}

std::vector<CheckRecord> two_nodes() {
    return {healthy(0, "n1", "10.0.0.1"), healthy(1, "n1", "10.0.0.1"),
            healthy(2, "n2", "10.0.0.2"), healthy(3, "n2", "10.0.0.2")};
}

void expect_one(const std::vector<CheckProblem>& ps, const std::string& where,
                std::initializer_list<const char*> mentions) {
    ASSERT_EQ(ps.size(), 1u) << (ps.empty() ? "no problem" : ps[0].line());
    EXPECT_EQ(ps[0].where, where);
    const std::string line = ps[0].line();
    EXPECT_EQ(line.find('\n'), std::string::npos);
    for (const char* m : mentions)
        EXPECT_NE(line.find(m), std::string::npos) << m << " in " << line;
}

}  // namespace

TEST(StepCheck, RecordRoundTripsAtFixedSize) {
    CheckRecord r = healthy(3, "n2", "10.0.0.2");
    r.node_rank = -1;
    r.port_error = "Address already in use";
    auto bytes = encode_check_record(r);
    EXPECT_EQ(bytes.size(), kCheckRecordBytes);
    auto back = decode_check_record(bytes);
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_EQ(*back, r);
}

TEST(StepCheck, LongFieldsAreCutNotOverflowed) {
    CheckRecord r = healthy(0, std::string(5000, 'h'), "10.0.0.1");
    for (std::string* s : {&r.host_error, &r.master_error, &r.interface_error, &r.port_error,
                           &r.gpu_error, &r.versions, &r.gpu, &r.gpu_key, &r.master_addr,
                           &r.network, &r.host_address, &r.master_address, &r.interface}) {
        *s = std::string(4000, 'x');
    }
    auto bytes = encode_check_record(r);
    EXPECT_EQ(bytes.size(), kCheckRecordBytes);
    auto back = decode_check_record(bytes);
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_EQ(back->host, std::string(140, 'h'));
}

TEST(StepCheck, MalformedRecordsAreRefused) {
    auto bytes = encode_check_record(healthy(0, "n1", "10.0.0.1"));
    auto wrong_version = bytes;
    wrong_version[3] = 9;
    EXPECT_NE(decode_check_record(wrong_version).error().message.find("same slurm-ddp release"),
              std::string::npos);
    auto junk_in_padding = bytes;
    junk_in_padding.back() = 1;
    EXPECT_FALSE(decode_check_record(junk_in_padding).ok());
    auto short_one = bytes;
    short_one.resize(100);
    EXPECT_FALSE(decode_check_record(short_one).ok());
    auto huge_length = bytes;
    huge_length[20] = 0xff;  // length of the host field
    EXPECT_FALSE(decode_check_record(huge_length).ok());
}

TEST(StepCheck, HealthyStepHasNoProblem) {
    auto all = two_nodes();
    EXPECT_TRUE(judge_step(all).empty());
    const std::string report = format_check_report(all, {});
    EXPECT_NE(report.find("slurm-ddp check: OK: 4 ranks"), std::string::npos) << report;
    EXPECT_NE(report.find("n1 -> 10.0.0.1"), std::string::npos) << report;
    EXPECT_EQ(report.find("FAIL"), std::string::npos) << report;
}

TEST(StepCheck, OwnNameOnLoopbackIsNamedOncePerNode) {
    auto all = two_nodes();
    all[2].host_address = "127.0.1.1";
    all[3].host_address = "127.0.1.1";
    auto ps = judge_step(all);
    expect_one(ps, "node n2", {"127.0.1.1", "loopback", "/etc/hosts"});
    ASSERT_EQ(ps.size(), 1u);
    EXPECT_EQ(ps[0].ranks, (std::vector<std::uint32_t>{2, 3}));
    const std::string report = format_check_report(all, ps);
    EXPECT_NE(report.find("FAILED: 1 problem"), std::string::npos) << report;
}

TEST(StepCheck, LoopbackNameIsFineOnOneNode) {
    auto all = two_nodes();
    for (auto& r : all) {
        r.host = "n1";
        r.host_address = "127.0.1.1";
        r.gpu_key = "/dev/nvidia" + std::to_string(r.rank);
    }
    EXPECT_TRUE(judge_step(all).empty());
}

TEST(StepCheck, MasterAddrNotResolving) {
    auto all = two_nodes();
    all[3].master_address.clear();
    all[3].interface.clear();
    all[3].master_error = "Name or service not known";
    expect_one(judge_step(all), "node n2", {"MASTER_ADDR 'n1' does not resolve", "--ddp=addr="});
    EXPECT_EQ(local_problems(all[3], true).size(), 1u);
}

TEST(StepCheck, MasterAddrOnLoopbackAwayFromRankZero) {
    auto all = two_nodes();
    all[2].master_address = "127.0.1.1";
    expect_one(judge_step(all), "node n2", {"resolves to 127.0.1.1", "another node"});
    // On rank 0's own node a loopback MASTER_ADDR works.
    all = two_nodes();
    all[1].master_address = "127.0.0.1";
    EXPECT_TRUE(judge_step(all).empty());
}

TEST(StepCheck, LoopbackIsFineForNodesSharingOneNetwork) {
    // Several slurmd on one machine: different host names, one network stack.
    auto all = two_nodes();
    for (auto& r : all) {
        r.network = "boot-1 net:[4026531992]";
        r.host_address = "127.0.1.1";
        r.master_address = "127.0.0.1";
    }
    EXPECT_TRUE(judge_step(all).empty());
    // n2 on a network of its own: its loopback MASTER_ADDR no longer reaches rank 0.
    all = two_nodes();
    for (auto& r : all) {
        r.network = r.host == "n1" ? "boot-1 net:[4026531992]" : "boot-2 net:[4026531992]";
        r.master_address = "127.0.0.1";
    }
    expect_one(judge_step(all), "node n2", {"(loopback) here, but rank 0 runs on another node"});
}

TEST(StepCheck, MasterAddrDiffersBetweenNodes) {
    auto all = two_nodes();
    all[2].master_address = "10.9.9.9";
    all[3].master_address = "10.9.9.9";
    auto ps = judge_step(all);
    expect_one(ps, "node n2", {"10.9.9.9 here but to 10.0.0.1 on rank 0's node n1"});
    ASSERT_EQ(ps.size(), 1u);
    EXPECT_EQ(ps[0].ranks, (std::vector<std::uint32_t>{2, 3}));
}

TEST(StepCheck, PortHeldOnRankZero) {
    auto all = two_nodes();
    all[0].port_error = "Address already in use";
    expect_one(judge_step(all), "rank 0 on n1",
               {"MASTER_PORT 29500", "Address already in use", "--ddp=port=N"});
}

TEST(StepCheck, TwoRanksOnOneGpu) {
    auto all = two_nodes();
    all[3].gpu = all[2].gpu;
    all[3].gpu_key = all[2].gpu_key;
    auto ps = judge_step(all);
    expect_one(ps, "ranks 2 and 3 on n2", {"Duplicate GPU", "gpu-bind=local"});
    // The same device file on two different nodes is two GPUs.
    all = two_nodes();
    all[2].gpu_key = all[0].gpu_key;
    EXPECT_TRUE(judge_step(all).empty());
}

TEST(StepCheck, GpuThatCannotBeOpened) {
    auto all = two_nodes();
    all[1].gpu_error = "cannot open /dev/nvidia1: Permission denied";
    expect_one(judge_step(all), "rank 1 on n1", {"Permission denied", "--gpus-per-task"});
}

TEST(StepCheck, VersionsDiffer) {
    auto all = two_nodes();
    all[2].versions = all[3].versions = "libslurm_ddp 0.2.0, driver none";
    expect_one(judge_step(all), "node n2", {"0.2.0", "0.1.0", "same slurm-ddp"});
}

TEST(StepCheck, JsonNamesEveryRankAndProblem) {
    auto all = two_nodes();
    all[0].port_error = "held \"by\" nc";
    auto ps = judge_step(all);
    const std::string json = format_check_json(all, ps, std::nullopt);
    EXPECT_EQ(json.rfind("{\"healthy\":false,\"exchange_error\":null,", 0), 0u) << json;
    EXPECT_NE(json.find("\\\"by\\\""), std::string::npos) << json;
    EXPECT_NE(json.find("\"ranks\":[0]"), std::string::npos) << json;
    EXPECT_NE(json.find("{\"rank\":3,\"host\":\"n2\""), std::string::npos) << json;
    const std::string ok = format_check_json(two_nodes(), {}, std::nullopt);
    EXPECT_EQ(ok.rfind("{\"healthy\":true,", 0), 0u) << ok;
    EXPECT_EQ(json_quote("a\nb"), "\"a\\u000ab\"");
}

TEST(StepCheck, LibraryMasterAddressCheck) {
    EXPECT_EQ(*judge_master_address("n1", {"10.0.0.1"}, "", "n2"), "");
    EXPECT_EQ(*judge_master_address("n1", {"127.0.1.1", "10.0.0.1"}, "", "n2"), "");
    auto loop = judge_master_address("n1", {"127.0.1.1"}, "", "n2");
    ASSERT_TRUE(loop.ok());
    EXPECT_NE(loop->find("resolves to 127.0.1.1 (loopback) on host 'n2'"), std::string::npos)
        << *loop;
    auto none = judge_master_address("nosuch", {}, "Name or service not known", "n2");
    ASSERT_FALSE(none.ok());
    EXPECT_NE(none.error().message.find("MASTER_ADDR 'nosuch' does not resolve on host 'n2' "
                                        "(Name or service not known)"),
              std::string::npos)
        << none.error().message;
}

TEST(StepCheck, MissingRanksNameTheirNodes) {
    EXPECT_EQ(missing_ranks_in("rendezvous: after 5 s: missing ranks 1,3-5 (of 8)"),
              (std::vector<std::uint32_t>{1, 3, 4, 5}));
    EXPECT_TRUE(missing_ranks_in("rank 1 could not reach rank 0").empty());
    EXPECT_TRUE(missing_ranks_in("missing ranks 5-3").empty());
    const std::vector<std::string> nodes{"n1", "n2", "n3"};
    const std::vector<std::vector<std::uint32_t>> per_node{{0, 1}, {2, 3}, {4, 5}};
    auto ps = missing_node_problems({3, 4, 5}, nodes, per_node, "n1", 5);
    ASSERT_EQ(ps.size(), 2u);
    EXPECT_EQ(ps[0].where, "node n2");
    EXPECT_EQ(ps[0].ranks, (std::vector<std::uint32_t>{3}));
    EXPECT_NE(ps[0].line().find("rank 3 did not join the rendezvous within 5 s"), std::string::npos)
        << ps[0].line();
    EXPECT_NE(ps[1].line().find("ranks 4,5 did not join"), std::string::npos) << ps[1].line();
    EXPECT_NE(ps[1].line().find("--exclude=n3"), std::string::npos) << ps[1].line();
}
