// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include "core/gpu/cpu_bind_list.hpp"

using namespace sddp;
using Cpus = std::vector<std::vector<int>>;

TEST(CpuBindList, ParsesMasksPerLocalRank) {
    EXPECT_EQ(*parse_cpu_bind_list("0x3,0xC"), (Cpus{{0, 1}, {2, 3}}));
    EXPECT_EQ(*parse_cpu_bind_list("0x00000F00,0xf0000000"),
              (Cpus{{8, 9, 10, 11}, {28, 29, 30, 31}}));
    EXPECT_EQ(*parse_cpu_bind_list("1"), (Cpus{{0}}));
    EXPECT_EQ(*parse_cpu_bind_list("0x10000000000000000"), (Cpus{{64}}));
}

TEST(CpuBindList, RejectsJunkNamingTheMask) {
    for (const char* bad : {"", ",", "0x3,", "0x", "0xZZ", "0x0", "0x3,,0xC", "-1"}) {
        auto r = parse_cpu_bind_list(bad);
        ASSERT_FALSE(r.ok()) << bad;
        EXPECT_NE(r.error().message.find("SLURM_CPU_BIND_LIST"), std::string::npos);
    }
    auto huge = parse_cpu_bind_list("0x" + std::string(100000, 'f'));
    ASSERT_FALSE(huge.ok());
    EXPECT_LT(huge.error().message.size(), 600u);
}
