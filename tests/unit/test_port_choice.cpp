#include <gtest/gtest.h>

#include <set>

#include "core/port_choice.hpp"

using namespace sddp;

namespace {
const PortRange kLinuxEphemeral{32768, 60999};
}

TEST(PortChoice, ExplicitOptionWins) {
    DdpOptions o;
    o.port = 23456;
    auto p = choose_master_port(7, 0, 0, std::string_view("12000-12003"), o, kLinuxEphemeral);
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(p->port, 23456);
    EXPECT_EQ(p->source, "option");
}

TEST(PortChoice, ReservedPortsNext) {
    auto p = choose_master_port(7, 0, 0, std::string_view("12000-12003"), {}, kLinuxEphemeral);
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(p->port, 12000);
    EXPECT_EQ(p->source, "reserved");
    EXPECT_EQ(choose_master_port(7, 0, 0, std::string_view("12007"), {}, kLinuxEphemeral)->port,
              12007);
    auto bad = choose_master_port(7, 0, 0, std::string_view("x-y"), {}, kLinuxEphemeral);
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().message.find("SLURM_STEP_RESV_PORTS"), std::string::npos);
}

TEST(PortChoice, DerivedPortsStayInRangeAndOutsideEphemeral) {
    DdpOptions o;
    o.port_range = PortRange{20000, 40000};  // overlaps the ephemeral range
    for (std::uint32_t job = 1; job < 5000; job += 7) {
        auto p = choose_master_port(job, job % 5, 0, std::nullopt, o, kLinuxEphemeral);
        ASSERT_TRUE(p.ok());
        EXPECT_GE(p->port, 20000);
        EXPECT_LT(p->port, 32768);
        EXPECT_EQ(p->source, "derived");
    }
}

TEST(PortChoice, StepsOfOneJobGetDistinctPorts) {
    std::set<std::uint16_t> ports;
    for (std::uint32_t step = 0; step < 64; ++step) {
        ports.insert(choose_master_port(4242, step, 0, std::nullopt, {}, kLinuxEphemeral)->port);
    }
    EXPECT_EQ(ports.size(), 64u);
}

TEST(PortChoice, CongruentJobIdsDoNotCollide) {
    // `base + jobid % 1000` gives all of these the same port.
    std::set<std::uint16_t> ports;
    for (std::uint32_t k = 0; k < 20; ++k) {
        ports.insert(
            choose_master_port(1000 * k + 17, 0, 0, std::nullopt, {}, kLinuxEphemeral)->port);
    }
    EXPECT_GE(ports.size(), 19u);
}

TEST(PortChoice, HetComponentsDiffer) {
    auto a = choose_master_port(99, 0, 0, std::nullopt, {}, kLinuxEphemeral)->port;
    auto b = choose_master_port(99, 0, 1, std::nullopt, {}, kLinuxEphemeral)->port;
    EXPECT_NE(a, b);
}

TEST(PortChoice, RangeInsideEphemeralIsAnError) {
    DdpOptions o;
    o.port_range = PortRange{40000, 41000};
    auto p = choose_master_port(1, 0, 0, std::nullopt, o, kLinuxEphemeral);
    ASSERT_FALSE(p.ok());
    EXPECT_NE(p.error().message.find("40000-41000"), std::string::npos);
    EXPECT_NE(p.error().message.find("ip_local_port_range"), std::string::npos);
}

TEST(PortChoice, UsableRangePicksLargerSide) {
    EXPECT_EQ(*usable_port_range({30000, 62000}, kLinuxEphemeral), (PortRange{30000, 32767}));
    EXPECT_EQ(*usable_port_range({1024, 65535}, kLinuxEphemeral), (PortRange{1024, 32767}));
    EXPECT_EQ(*usable_port_range({20000, 29999}, std::nullopt), (PortRange{20000, 29999}));
}

TEST(PortChoice, ParsesProcEphemeralRange) {
    EXPECT_EQ(*parse_ephemeral_range("32768\t60999\n"), kLinuxEphemeral);
    EXPECT_FALSE(parse_ephemeral_range("").has_value());
    EXPECT_FALSE(parse_ephemeral_range("60999 32768").has_value());
    EXPECT_FALSE(parse_ephemeral_range("1 2 3").has_value());
}
