// SPDX-License-Identifier: Apache-2.0
// core/base/log: one sink, levels from SDDP_DEBUG, errors always through.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/base/log.hpp"

namespace sddp {
namespace {

std::vector<std::string> g_lines;

void capture(LogLevel level, std::string_view message) {
    g_lines.push_back(std::string(to_string(level)) + ":" + std::string(message));
}

struct SinkGuard {
    ~SinkGuard() { set_log_sink(nullptr, kDefaultLogLevel); }
};

TEST(Log, ThresholdFiltersAndErrorsAlwaysPass) {
    SinkGuard guard;
    g_lines.clear();
    set_log_sink(&capture, LogLevel::warn);
    log(LogLevel::debug, "d");
    log(LogLevel::info, "i");
    log(LogLevel::warn, "w");
    log(LogLevel::error, "e");
    EXPECT_EQ(g_lines, (std::vector<std::string>{"warning:w", "error:e"}));
    EXPECT_FALSE(log_enabled(LogLevel::info));
    set_log_sink(&capture, LogLevel::debug);
    log(LogLevel::debug, "d2");
    EXPECT_EQ(g_lines.back(), "debug:d2");
    set_log_sink(&capture, LogLevel::error);
    log(LogLevel::error, "e2");
    EXPECT_EQ(g_lines.back(), "error:e2");
}

TEST(Log, NoSinkDropsEverything) {
    SinkGuard guard;
    g_lines.clear();
    set_log_sink(nullptr, LogLevel::debug);
    log(LogLevel::error, "lost");
    EXPECT_TRUE(g_lines.empty());
    EXPECT_FALSE(log_enabled(LogLevel::error));
}

TEST(Log, LevelsFromTheVariable) {
    EXPECT_EQ(*parse_log_level(std::nullopt), LogLevel::warn);
    EXPECT_EQ(*parse_log_level(""), LogLevel::warn);
    EXPECT_EQ(*parse_log_level("info"), LogLevel::info);
    EXPECT_EQ(*parse_log_level("debug"), LogLevel::debug);
    EXPECT_EQ(*parse_log_level("warn"), LogLevel::warn);
    auto bad = parse_log_level("loud");
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().message.find("SDDP_DEBUG='loud'"), std::string::npos)
        << bad.error().message;
}

}  // namespace
}  // namespace sddp
