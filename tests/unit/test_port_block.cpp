// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cerrno>
#include <set>

#include "core/port_block.hpp"

using namespace sddp;

namespace {

// MASTER_PORT as the step's block starts it (core/port_block), with the default block size.
struct FirstPort {
    std::uint16_t port = 0;
    PortSource source = PortSource::derived;
};
Result<FirstPort> first_port_of_block(std::uint32_t job, std::uint32_t step,
                                      std::optional<std::string_view> resv, const DdpOptions& o) {
    PortBlockInput in;
    in.job_id = job;
    in.step_id = step;
    in.resv_ports = resv;
    SDDP_TRY(block, choose_port_block(in, o));
    return FirstPort{block.first, block.source};
}

}  // namespace

TEST(PortBlock, ExplicitOptionWins) {
    DdpOptions o;
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
    DdpOptions o;
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
