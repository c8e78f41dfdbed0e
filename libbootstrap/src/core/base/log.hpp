// SPDX-License-Identifier: Apache-2.0
// One logging sink with levels for the whole library: the rendezvous, the NCCL layer and the API
// log here, and whoever hosts the library decides where it goes (the library's stderr sink,
// or slurm_error/info/verbose/debug inside the plugin). The core only dispatches: no I/O.
#pragma once

#include <optional>
#include <string_view>

#include "core/base/result.hpp"

namespace sddp {

enum class LogLevel { error = 0, warn = 1, info = 2, debug = 3 };

// SDDP_DEBUG=warn|info|debug picks the threshold of the library's stderr sink (default warn;
// errors are always logged).
inline constexpr const char* kLogLevelVar = "SDDP_DEBUG";
inline constexpr LogLevel kDefaultLogLevel = LogLevel::warn;
inline constexpr const char* kLogPrefix = "slurm-ddp: ";

// nullopt/"" -> the default; an error names the variable, the value and the valid levels.
Result<LogLevel> parse_log_level(std::optional<std::string_view> text);
const char* to_string(LogLevel level);

// Receives each message that passes the threshold, without prefix or newline. Must be safe to
// call from any thread (the rendezvous logs from its event loop and the PMI2 worker).
using LogSink = void (*)(LogLevel level, std::string_view message);

// Installs a sink (nullptr drops everything) and its threshold; atomic, may race with log().
void set_log_sink(LogSink sink, LogLevel threshold);
bool log_enabled(LogLevel level);
void log(LogLevel level, std::string_view message);

}  // namespace sddp
