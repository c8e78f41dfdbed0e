// SPDX-License-Identifier: Apache-2.0
// core/base/bytes (hex, big-endian) and os/random_bytes.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "core/base/bytes.hpp"
#include "os/random_bytes.hpp"

namespace sddp {
namespace {

TEST(Hex, RoundTripAndRejects) {
    const std::uint8_t d[] = {0x00, 0x0f, 0xa0, 0xff};
    EXPECT_EQ(to_hex(d), "000fa0ff");
    auto back = from_hex("000FA0ff");
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(*back, Bytes(std::begin(d), std::end(d)));
    EXPECT_FALSE(from_hex("abc").has_value());  // odd length
    EXPECT_FALSE(from_hex("0g").has_value());   // not a digit
    EXPECT_FALSE(from_hex("0 ").has_value());
    EXPECT_TRUE(from_hex("")->empty());
    EXPECT_EQ(hex_digit('F'), 15);
    EXPECT_EQ(hex_digit('x'), -1);
    EXPECT_EQ(to_hex(std::string_view("\x01", 1)), "01");
}

TEST(BigEndian, WritesNetworkByteOrder) {
    Bytes b;
    put_be16(b, 0x0102);
    put_be32(b, 0x03040506u);
    put_be64(b, 0x0708090a0b0c0d0eull);
    EXPECT_EQ(to_hex(b), "0102030405060708090a0b0c0d0e");
    EXPECT_EQ(to_hex(be32(0x03040506u)), "03040506");
    EXPECT_EQ(to_hex(be64(0x0708090a0b0c0d0eull)), "0708090a0b0c0d0e");
}

TEST(RandomBytes, LengthAndVariety) {
    auto a = random_bytes(32);
    auto b = random_bytes(32);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(a->size(), 32u);
    EXPECT_NE(*a, *b);
    auto none = random_bytes(0);
    ASSERT_TRUE(none.ok());
    EXPECT_TRUE(none->empty());
    auto big = random_bytes(100000);  // more than one getrandom call may return
    ASSERT_TRUE(big.ok());
    EXPECT_EQ(big->size(), 100000u);
}

}  // namespace
}  // namespace sddp
