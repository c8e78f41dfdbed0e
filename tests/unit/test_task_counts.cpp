// SPDX-License-Identifier: Apache-2.0
#include "core/slurm/task_counts.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace sddp {
namespace {

using Counts = std::vector<std::uint32_t>;

TEST(TaskCounts, ExpandsValidSpecs) {
    const struct {
        const char* spec;
        Counts counts;
    } cases[] = {
        {"1", {1}},
        {"8", {8}},
        {"2(x3),1", {2, 2, 2, 1}},
        {"2(x3)", {2, 2, 2}},
        {"1(x1)", {1}},
        {"4,4,2", {4, 4, 2}},
        {"3(x2),1,5(x2)", {3, 3, 1, 5, 5}},
        {"0", {0}},  // odd but well-formed; the caller checks the sum against the task count
        {"007", {7}},
        {"4294967295", {4294967295u}},
        {" 4 , 2(x2) ", {4, 2, 2}},
        {"2(x3),1\n", {2, 2, 2, 1}},
    };
    for (const auto& c : cases) {
        auto r = expand_task_counts(c.spec);
        ASSERT_TRUE(r.ok()) << c.spec << ": " << r.error().message;
        EXPECT_EQ(*r, c.counts) << c.spec;
    }
}

TEST(TaskCounts, RejectsMalformedSpecsWithClearErrors) {
    const struct {
        const char* spec;
        Errc code;
        const char* must_mention;
    } cases[] = {
        {"", Errc::invalid_input, "empty"},
        {"  ", Errc::invalid_input, "empty"},
        {"2(x0)", Errc::invalid_input, "'2(x0)'"},
        {"1,2(x0)", Errc::invalid_input, "'2(x0)'"},
        {"2x3", Errc::invalid_input, "'2x3'"},
        {"1,2x3", Errc::invalid_input, "'2x3'"},
        {"2(x3", Errc::invalid_input, "'2(x3'"},
        {"2x3)", Errc::invalid_input, "'2x3)'"},
        {"2)", Errc::invalid_input, "'2)'"},
        {"2(3)", Errc::invalid_input, "'2(3)'"},
        {"2(X3)", Errc::invalid_input, "'2(X3)'"},
        {"(x3)", Errc::invalid_input, "'(x3)'"},
        {"2(x)", Errc::invalid_input, "'2(x)'"},
        {"2(x3)4", Errc::invalid_input, "'2(x3)4'"},
        {"-1", Errc::invalid_input, "'-1'"},
        {"2(x-1)", Errc::invalid_input, "'-1'"},
        {"a", Errc::invalid_input, "'a'"},
        {"1,b(x2)", Errc::invalid_input, "'b'"},
        {"2(xa)", Errc::invalid_input, "'a'"},
        {"+2", Errc::invalid_input, "'+2'"},
        {"2 (x3)", Errc::invalid_input, "'2 '"},
        {"2,,1", Errc::invalid_input, "'2,,1'"},
        {",2", Errc::invalid_input, "empty entry"},
        {"2,", Errc::invalid_input, "empty entry"},
        {"4294967296", Errc::invalid_input, "'4294967296'"},
        {"99999999999999999999999", Errc::invalid_input, "'99999999999999999999999'"},
        {"1(x99999999999999999999)", Errc::invalid_input, "'99999999999999999999'"},
        {"1(x2000000)", Errc::too_large, "2000000"},
        {"1(x18446744073709551615),1(x18446744073709551615)", Errc::too_large, "limit"},
    };
    for (const auto& c : cases) {
        auto r = expand_task_counts(c.spec);
        ASSERT_FALSE(r.ok()) << c.spec;
        EXPECT_EQ(r.error().code, c.code) << c.spec << ": " << r.error().message;
        EXPECT_NE(r.error().message.find(c.must_mention), std::string::npos)
            << "message for " << c.spec << " lacks " << c.must_mention << ": " << r.error().message;
        if (c.code == Errc::invalid_input) {
            EXPECT_NE(r.error().message.find("e.g. '2(x3),1'"), std::string::npos)
                << r.error().message;
        }
    }
}

TEST(TaskCounts, EnforcesTheCapBeforeAllocating) {
    EXPECT_EQ(expand_task_counts("2(x4)", 4)->size(), 4u);
    auto r = expand_task_counts("2(x4),1", 4);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, Errc::too_large);
    EXPECT_NE(r.error().message.find("5 nodes"), std::string::npos) << r.error().message;
    EXPECT_EQ(expand_task_counts("1", 0).error().code, Errc::too_large);
    auto full = expand_task_counts("3(x1048575),1");
    ASSERT_TRUE(full.ok()) << full.error().message;
    EXPECT_EQ(full->size(), kMaxTaskCountEntries);
    EXPECT_EQ(full->back(), 1u);
}

TEST(TaskCounts, TruncatesLongInputsInMessages) {
    std::string spec(50000, '1');
    auto r = expand_task_counts(spec);
    ASSERT_FALSE(r.ok());
    EXPECT_LT(r.error().message.size(), 1000u);
}

// Slurm's own encoding: equal neighbours become N(xM).
std::string encode(const Counts& counts) {
    std::string out;
    for (std::size_t i = 0; i < counts.size();) {
        std::size_t j = i;
        while (j < counts.size() && counts[j] == counts[i]) ++j;
        if (!out.empty()) out += ',';
        out += std::to_string(counts[i]);
        if (j - i > 1) out += "(x" + std::to_string(j - i) + ")";
        i = j;
    }
    return out;
}

TEST(TaskCounts, RoundTripsRandomCounts) {
    std::mt19937 rng(7);
    for (int iter = 0; iter < 2000; ++iter) {
        Counts counts;
        const int runs = 1 + static_cast<int>(rng() % 10);
        for (int r = 0; r < runs; ++r) {
            const std::uint32_t v = rng() % 4 == 0 ? static_cast<std::uint32_t>(rng()) : rng() % 9;
            counts.insert(counts.end(), 1 + rng() % 5, v);
        }
        auto back = expand_task_counts(encode(counts));
        ASSERT_TRUE(back.ok()) << encode(counts) << ": " << back.error().message;
        EXPECT_EQ(*back, counts) << encode(counts);
    }
}

}  // namespace
}  // namespace sddp
