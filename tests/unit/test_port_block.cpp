// SPDX-License-Identifier: Apache-2.0
// The block of ports a step gets: disjoint across a job's steps and jobs, inside the reserved
// range, sized from the options.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "core/task/launch_env.hpp"
#include "core/task/port_block.hpp"
#include "step_vars.hpp"

using namespace sddp;
using namespace sddp::unit;

// ---- port blocks -------------------------------------------------------------------------------

TEST(PortBlock, ConcurrentStepsOfOneJobAreDisjoint) {
    const StepOptions o;
    std::vector<PortBlock> blocks;
    for (std::uint32_t step = 0; step < 64; ++step) {
        PortBlockInput in;
        in.job_id = 777;
        in.step_id = step;
        auto b = choose_port_block(in, o);
        ASSERT_TRUE(b.ok()) << b.error().message;
        EXPECT_EQ(b->last - b->first + 1, static_cast<int>(kPortsParam.value));
        EXPECT_GE(b->first, kDefaultPortRange.first);
        EXPECT_LE(b->last, kDefaultPortRange.last);
        for (const auto& other : blocks)
            EXPECT_TRUE(b->last < other.first || b->first > other.last)
                << port_block_text(*b) << " overlaps " << port_block_text(other);
        blocks.push_back(*b);
    }
}

TEST(PortBlock, CongruentJobIdsLandApart) {
    // base + jobid % 10000 schemes collide here; the mixed hash does not.
    PortBlockInput a, b;
    a.job_id = 10007;
    b.job_id = 20007;
    auto pa = choose_port_block(a, {}), pb = choose_port_block(b, {});
    ASSERT_TRUE(pa.ok() && pb.ok());
    EXPECT_TRUE(pa->last < pb->first || pa->first > pb->last);
}

TEST(PortBlock, SizesFromOptionsAndSources) {
    PortBlockInput in;
    in.job_id = 5;
    auto b = choose_port_block(in, opts_of("port=29500,ports=8"));
    ASSERT_TRUE(b.ok());
    EXPECT_EQ(port_block_text(*b), "29500-29507");
    EXPECT_EQ(b->source, PortSource::option);
    in.user_port = 40000;
    EXPECT_EQ(port_block_text(*choose_port_block(in, {})), "40000-40003");
    EXPECT_EQ(choose_port_block(in, {})->source, PortSource::user);
    in.user_port = 65534;
    auto high = choose_port_block(in, {});
    ASSERT_FALSE(high.ok());
    EXPECT_NE(high.error().message.find("65535"), std::string::npos);
}

TEST(PortBlock, ReservedPortsMustHoldTheBlock) {
    PortBlockInput in;
    in.resv_ports = "12000-12005";
    auto b = choose_port_block(in, {});
    ASSERT_TRUE(b.ok()) << b.error().message;
    EXPECT_EQ(port_block_text(*b), "12000-12003");
    EXPECT_EQ(b->source, PortSource::reserved);
    in.resv_ports = "12000,12001-12002,12003";
    EXPECT_EQ(port_block_text(*choose_port_block(in, {})), "12000-12003");
    in.resv_ports = "12000-12001";
    // Slurm reserves a few ports for every step where MpiParams=ports= is set: with the default
    // size the block is Slurm's; with a size asked for, fewer is an error naming --resv-ports.
    auto dflt = choose_port_block(in, {});
    ASSERT_TRUE(dflt.ok()) << dflt.error().message;
    EXPECT_EQ(port_block_text(*dflt), "12000-12001");
    auto few = choose_port_block(in, opts_of("ports=4"));
    ASSERT_FALSE(few.ok());
    EXPECT_NE(few.error().message.find("--resv-ports=4"), std::string::npos) << few.error().message;
    EXPECT_NE(few.error().message.find("12000-12001"), std::string::npos);
    EXPECT_TRUE(choose_port_block(in, opts_of("ports=2")).ok());
    in.resv_ports = "12000,12002-12010";  // not consecutive from the first
    EXPECT_FALSE(choose_port_block(in, opts_of("ports=4")).ok());
    in.resv_ports = "junk";
    EXPECT_FALSE(choose_port_block(in, {}).ok());
}

TEST(PortBlock, ExportedAsSlurmDdpPorts) {
    auto f = facts_of(task(0, 0, 0, 2, "n[1-2]", 2, "1(x2)", "n1"));
    auto e = derive_launch_env(f, opts_of("port=29500,ports=6"), {});
    ASSERT_TRUE(e.ok());
    EXPECT_EQ(as_map(e->vars)["SLURM_DDP_PORTS"], "29500-29505");
    EXPECT_EQ(as_map(e->vars)["MASTER_PORT"], "29500");
}

namespace {

// MASTER_PORT as the step's block starts it (core/task/port_block), with the default block size.
struct FirstPort {
    std::uint16_t port = 0;
    PortSource source = PortSource::derived;
};
Result<FirstPort> first_port_of_block(std::uint32_t job, std::uint32_t step,
                                      std::optional<std::string_view> resv, const StepOptions& o) {
    PortBlockInput in;
    in.job_id = job;
    in.step_id = step;
    in.resv_ports = resv;
    SDDP_TRY(block, choose_port_block(in, o));
    return FirstPort{block.first, block.source};
}

}  // namespace

TEST(PortBlock, ExplicitOptionWins) {
    StepOptions o;
    o.port = 23456;
    auto p = first_port_of_block(7, 0, std::string_view("12000-12003"), o);
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(p->port, 23456);
    EXPECT_EQ(p->source, PortSource::option);
}

TEST(PortBlock, ReservedPortsNext) {
    auto p = first_port_of_block(7, 0, std::string_view("12000-12003"), {});
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(p->port, 12000);
    EXPECT_EQ(p->source, PortSource::reserved);
    EXPECT_EQ(first_port_of_block(7, 0, std::string_view("12007"), {})->port, 12007);
    auto bad = first_port_of_block(7, 0, std::string_view("x-y"), {});
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().message.find("SLURM_STEP_RESV_PORTS"), std::string::npos);
}

TEST(PortBlock, DerivedPortsStayInTheSiteRange) {
    StepOptions o;
    o.port_range = PortRange{20000, 40000};
    for (std::uint32_t job = 1; job < 5000; job += 7) {
        auto p = first_port_of_block(job, job % 5, std::nullopt, o);
        ASSERT_TRUE(p.ok());
        EXPECT_GE(p->port, 20000);
        EXPECT_LE(p->port, 40000);
        EXPECT_EQ(p->source, PortSource::derived);
    }
    for (std::uint32_t job = 1; job < 5000; job += 7) {
        auto p = first_port_of_block(job, 0, std::nullopt, {});
        EXPECT_GE(p->port, kDefaultPortRange.first);
        EXPECT_LE(p->port, kDefaultPortRange.last);
    }
}

TEST(PortBlock, StepsOfOneJobGetDistinctPorts) {
    std::set<std::uint16_t> ports;
    for (std::uint32_t step = 0; step < 64; ++step) {
        ports.insert(first_port_of_block(4242, step, std::nullopt, {})->port);
    }
    EXPECT_EQ(ports.size(), 64u);
}

TEST(PortBlock, CongruentJobIdsDoNotCollide) {
    // `base + jobid % 1000` gives all of these the same port.
    std::set<std::uint16_t> ports;
    for (std::uint32_t k = 0; k < 20; ++k) {
        ports.insert(first_port_of_block(1000 * k + 17, 0, std::nullopt, {})->port);
    }
    EXPECT_GE(ports.size(), 19u);
}

TEST(PortBlock, BusyPortIsAClearError) {
    EXPECT_TRUE(master_port_status(23456, PortSource::derived, 0).ok());
    auto busy = master_port_status(23456, PortSource::derived, EADDRINUSE);
    ASSERT_FALSE(busy.ok());
    for (const char* needle :
         {"MASTER_PORT=23456", "rank 0's node", "--ddp=port=N", "--resv-ports"})
        EXPECT_NE(busy.error().message.find(needle), std::string::npos) << needle;
    auto other = master_port_status(80, PortSource::option, EACCES);
    ASSERT_FALSE(other.ok());
    EXPECT_NE(other.error().message.find("--ddp=port=N"), std::string::npos);
}
