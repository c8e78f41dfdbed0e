// SPDX-License-Identifier: Apache-2.0
#include "core/base/log.hpp"

#include <atomic>
#include <string>

#include "core/base/numbers.hpp"

namespace sddp {
namespace {

std::atomic<LogSink> g_sink{nullptr};
std::atomic<int> g_threshold{static_cast<int>(kDefaultLogLevel)};

}  // namespace

Result<LogLevel> parse_log_level(std::optional<std::string_view> text) {
    if (!text || text->empty()) return kDefaultLogLevel;
    if (*text == "error") return LogLevel::error;
    if (*text == "warn" || *text == "warning") return LogLevel::warn;
    if (*text == "info") return LogLevel::info;
    if (*text == "debug") return LogLevel::debug;
    return make_error(Errc::invalid_input, std::string(kLogLevelVar) + "=" + quote_value(*text) +
                                               " is not a log level; use warn (the default), "
                                               "info or debug");
}

const char* to_string(LogLevel level) {
    switch (level) {
        case LogLevel::error:
            return "error";
        case LogLevel::warn:
            return "warning";
        case LogLevel::info:
            return "info";
        case LogLevel::debug:
            return "debug";
    }
    return "?";
}

void set_log_sink(LogSink sink, LogLevel threshold) {
    g_threshold.store(static_cast<int>(threshold), std::memory_order_relaxed);
    g_sink.store(sink, std::memory_order_release);
}

bool log_enabled(LogLevel level) {
    return g_sink.load(std::memory_order_acquire) != nullptr &&
           static_cast<int>(level) <= g_threshold.load(std::memory_order_relaxed);
}

void log(LogLevel level, std::string_view message) {
    const LogSink sink = g_sink.load(std::memory_order_acquire);
    if (sink == nullptr) return;
    if (level != LogLevel::error &&
        static_cast<int>(level) > g_threshold.load(std::memory_order_relaxed)) {
        return;
    }
    sink(level, message);
}

}  // namespace sddp
