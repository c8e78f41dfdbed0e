// SPDX-License-Identifier: Apache-2.0
// core/base/env_lookup: the map-backed look-up every pure function and test reads through.
#include <gtest/gtest.h>

#include "core/base/env_lookup.hpp"

using namespace sddp;

TEST(EnvLookup, MapEnvTellsUnsetFromEmpty) {
    const EnvLookup env = map_env({{"SET", "value"}, {"EMPTY", ""}});
    EXPECT_EQ(env("SET"), std::optional<std::string>("value"));
    EXPECT_EQ(env("EMPTY"), std::optional<std::string>(""));
    EXPECT_FALSE(env("UNSET").has_value());
    EXPECT_FALSE(env("set").has_value());  // names are case-sensitive, as in the environment
}

TEST(EnvLookup, MapEnvOwnsACopy) {
    std::map<std::string, std::string, std::less<>> vars{{"A", "1"}};
    const EnvLookup env = map_env(vars);
    vars["A"] = "2";
    vars["B"] = "3";
    EXPECT_EQ(env("A"), std::optional<std::string>("1"));
    EXPECT_FALSE(env("B").has_value());
}
