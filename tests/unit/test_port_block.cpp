// SPDX-License-Identifier: Apache-2.0
// The block of ports a step gets: disjoint across a job's steps and jobs, inside the reserved
// range, sized from the options.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/launch_env.hpp"
#include "core/port_block.hpp"
#include "step_vars.hpp"

using namespace sddp;
using namespace sddp::unit;

// ---- port blocks -------------------------------------------------------------------------------

TEST(PortBlock, ConcurrentStepsOfOneJobAreDisjoint) {
    const DdpOptions o;
    std::vector<PortBlock> blocks;
    for (std::uint32_t step = 0; step < 64; ++step) {
        PortBlockInput in;
        in.job_id = 777;
        in.step_id = step;
        auto b = choose_port_block(in, o);
        ASSERT_TRUE(b.ok()) << b.error().message;
        EXPECT_EQ(b->last - b->first + 1, static_cast<int>(kDefaultPortBlock));
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
    EXPECT_EQ(b->source, "option");
    in.user_port = 40000;
    EXPECT_EQ(port_block_text(*choose_port_block(in, {})), "40000-40003");
    EXPECT_EQ(choose_port_block(in, {})->source, "user");
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
    EXPECT_EQ(b->source, "reserved");
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
