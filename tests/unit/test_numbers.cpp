// SPDX-License-Identifier: Apache-2.0
// Strict decimals and quoted values: what std::stoul would let through is refused here.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "core/base/numbers.hpp"

using namespace sddp;

TEST(ParseDecimal, DigitsUpToTheLimit) {
    EXPECT_EQ(parse_decimal("0", 10), 0u);
    EXPECT_EQ(parse_decimal("007", 10), 7u);
    EXPECT_EQ(parse_decimal("10", 10), 10u);
    EXPECT_EQ(parse_decimal("11", 10), std::nullopt);
    constexpr auto kMax = std::numeric_limits<std::uint64_t>::max();
    EXPECT_EQ(parse_decimal("18446744073709551615", kMax), kMax);
}

TEST(ParseDecimal, RefusesWhatStoulAccepts) {
    for (const char* bad : {"", " 12", "12 ", "12abc", "-1", "+1", "0x10", "1e3", "1.0"})
        EXPECT_EQ(parse_decimal(bad, 1000), std::nullopt) << bad;
}

TEST(ParseDecimal, OverflowIsRefusedNotWrapped) {
    constexpr auto kMax = std::numeric_limits<std::uint64_t>::max();
    EXPECT_EQ(parse_decimal("18446744073709551616", kMax), std::nullopt);
    EXPECT_EQ(parse_decimal("99999999999999999999", kMax), std::nullopt);
    EXPECT_EQ(parse_decimal("000000000000000000001", kMax), std::nullopt);  // over 20 chars
}

TEST(QuoteValue, QuotesAndEscapesControlCharacters) {
    EXPECT_EQ(quote_value("n1"), "'n1'");
    EXPECT_EQ(quote_value(""), "''");
    EXPECT_EQ(quote_value(std::string("a\nb\x7f", 4)), "'a\\x0ab\\x7f'");
}

TEST(QuoteValue, ShortensLongValuesAndSaysHowLong) {
    const std::string big(1 << 20, 'x');
    const std::string q = quote_value(big, 8);
    EXPECT_EQ(q, "'xxxxxxxx...' (1048576 chars)");
    EXPECT_EQ(quote_value("12345678", 8), "'12345678'");
}
