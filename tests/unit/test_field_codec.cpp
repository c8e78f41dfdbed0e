// SPDX-License-Identifier: Apache-2.0
// core/base/field_codec: the records of big-endian fields under the wire, preflight and check
// formats.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <string>

#include "core/base/field_codec.hpp"

namespace sddp {
namespace {

TEST(FieldCodec, WriteThenReadAndStopAtTheEnd) {
    FieldWriter w;
    w.u8(0xff);
    w.u16(0x0102);
    w.u32(0x03040506u);
    w.u64(0x0708090a0b0c0d0eull);
    w.i32(-2);
    w.str16("ab", 8);
    w.str32("cde", 8);
    w.blob32(std::array<std::uint8_t, 2>{9, 8});
    const Bytes b = std::move(w).take();
    // u8 | u16 | u32 | u64 | i32 | str16 | str32 | blob32
    EXPECT_EQ(to_hex(b),
              "ff"
              "0102"
              "03040506"
              "0708090a0b0c0d0e"
              "fffffffe"
              "0002"
              "6162"
              "00000003"
              "636465"
              "00000002"
              "0908");
    FieldReader r(b);
    EXPECT_EQ(r.u8("a"), 0xff);
    EXPECT_EQ(r.u16("b"), 0x0102);
    EXPECT_EQ(r.u32("c"), 0x03040506u);
    EXPECT_EQ(r.u64("d"), 0x0708090a0b0c0d0eull);
    EXPECT_EQ(r.i32("e"), -2);
    EXPECT_EQ(r.str16(8, "f"), "ab");
    EXPECT_EQ(r.str32(8, "g"), "cde");
    EXPECT_EQ(r.blob32(8, "h"), (Bytes{9, 8}));
    EXPECT_EQ(r.remaining(), 0u);
    EXPECT_TRUE(r.finish().ok());
    EXPECT_EQ(r.u16("past the end"), 0);
    EXPECT_FALSE(r.ok());
}

TEST(FieldCodec, TextIsCutWhenWrittenAndRefusedWhenRead) {
    FieldWriter w;
    w.str16("abcdef", 3);
    w.str32("abcdef", 6);
    const Bytes b = std::move(w).take();
    FieldReader r(b, "test record");
    EXPECT_EQ(r.str16(3, "short"), "abc");
    EXPECT_EQ(r.str32(5, "long"), "");
    EXPECT_FALSE(r.ok());
    EXPECT_EQ(r.error(), "test record: long is longer than its limit");
}

TEST(FieldCodec, FirstFailureSticksAndNamesTheField) {
    const Bytes b = {0, 0, 0};
    FieldReader r(b, "hello message");
    EXPECT_EQ(r.u32("rank"), 0u);
    EXPECT_EQ(r.u8("flag"), 0);  // the 3 bytes are still there, but the record is already bad
    EXPECT_TRUE(r.take(1, "byte").empty());
    const Status st = r.finish();
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.error().code, Errc::protocol);
    EXPECT_EQ(st.error().message, "hello message: rank is truncated");
}

TEST(FieldCodec, TrailingBytesAreAnError) {
    const Bytes b = {0, 1, 2};
    FieldReader r(b, "joined message");
    EXPECT_EQ(r.u16("count"), 1);
    const Status st = r.finish();
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.error().message, "joined message: payload has trailing bytes");
}

TEST(FieldCodec, FixedSizeFieldsAndRawBytes) {
    FieldWriter w;
    w.raw(std::array<std::uint8_t, 4>{1, 2, 3, 4});
    const Bytes b = std::move(w).take();
    FieldReader r(b);
    std::array<std::uint8_t, 3> three{};
    r.fixed(three, "nonce");
    EXPECT_EQ(three, (std::array<std::uint8_t, 3>{1, 2, 3}));
    r.fixed(three, "mac");
    EXPECT_EQ(r.error(), "record: mac is truncated");
}

}  // namespace
}  // namespace sddp
