// SPDX-License-Identifier: Apache-2.0
// core/base/result: the error returns every layer uses instead of exceptions.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "core/base/result.hpp"

using namespace sddp;

namespace {

Result<int> parse_small(int v) {
    if (v > 9) return make_error(Errc::too_large, "v=" + std::to_string(v) + " is over 9");
    return v;
}

// SDDP_TRY binds the value or returns the error unchanged; SDDP_CHECK does the same for Status.
Result<int> doubled(int v) {
    SDDP_TRY(n, parse_small(v));
    return 2 * n;
}

Status checked(int v) {
    SDDP_CHECK(parse_small(v));
    return ok_status();
}

}  // namespace

TEST(Result, ValueOrError) {
    auto good = parse_small(4);
    ASSERT_TRUE(good.ok());
    EXPECT_TRUE(static_cast<bool>(good));
    EXPECT_EQ(*good, 4);
    auto bad = parse_small(12);
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().code, Errc::too_large);
    EXPECT_EQ(bad.error().message, "v=12 is over 9");
}

TEST(Result, TryAndCheckPropagateTheFirstError) {
    EXPECT_EQ(*doubled(3), 6);
    auto e = doubled(10);
    ASSERT_FALSE(e.ok());
    EXPECT_EQ(e.error().code, Errc::too_large);
    EXPECT_EQ(e.error().message, "v=10 is over 9");
    EXPECT_TRUE(checked(1).ok());
    EXPECT_EQ(checked(11).error().message, "v=11 is over 9");
}

TEST(Result, HoldsMoveOnlyValuesAndGivesThemUp) {
    Result<std::unique_ptr<int>> r(std::make_unique<int>(7));
    ASSERT_TRUE(r.ok());
    std::unique_ptr<int> taken = std::move(r).value();
    EXPECT_EQ(*taken, 7);
    Result<std::unique_ptr<int>> err(make_error(Errc::io, "no"));
    Error moved = err.take_error();
    EXPECT_EQ(moved.code, Errc::io);
}
