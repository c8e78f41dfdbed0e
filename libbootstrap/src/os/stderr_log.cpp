// SPDX-License-Identifier: Apache-2.0
#include "os/stderr_log.hpp"

#include <unistd.h>

#include <cerrno>
#include <string>

namespace sddp {

void stderr_log_sink(LogLevel level, std::string_view message) {
    std::string line = kLogPrefix;
    if (level != LogLevel::info) line += std::string(to_string(level)) + ": ";
    line.append(message);
    line += '\n';
    // One write per line, so lines of concurrent ranks and threads do not interleave.
    std::string_view rest = line;
    while (!rest.empty()) {
        const ssize_t n = ::write(STDERR_FILENO, rest.data(), rest.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;
        rest.remove_prefix(static_cast<std::size_t>(n));
    }
}

void use_stderr_log(const EnvLookup& env) {
    if (log_enabled(LogLevel::error)) return;  // a host's sink is installed
    auto level = parse_log_level(env(kLogLevelVar));
    set_log_sink(&stderr_log_sink, level ? *level : kDefaultLogLevel);
    if (!level) log(LogLevel::warn, level.error().message);
}

}  // namespace sddp
