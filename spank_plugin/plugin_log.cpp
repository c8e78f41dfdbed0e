// SPDX-License-Identifier: Apache-2.0
#include "plugin_log.hpp"

#include <unistd.h>

#include <cerrno>
#include <string>

#include "core/base/log.hpp"
#include "plugin_state.hpp"
#include "spank_api.hpp"

namespace sddp::plugin {
namespace {

// Slurm's log functions are printf-like: pass the text as an argument, never as the format.
// Slurm filters by its own verbosity (srun -v, SlurmdDebug), so every level reaches it.
void slurm_log_sink(LogLevel level, std::string_view message) {
    const std::string line = std::string(kLogPrefix) + std::string(message);
    switch (level) {
        case LogLevel::error:
            slurm_error("%s", line.c_str());
            return;
        case LogLevel::warn:
            slurm_info("%s", line.c_str());
            return;
        case LogLevel::info:
            slurm_verbose("%s", line.c_str());
            return;
        case LogLevel::debug:
            slurm_debug("%s", line.c_str());
            return;
    }
}

}  // namespace

void use_slurm_log() {
    set_log_sink(&slurm_log_sink, LogLevel::debug);
}

void log_error(std::string_view msg) {
    log(LogLevel::error, msg);
}
void log_info(std::string_view msg) {
    log(LogLevel::warn, msg);
}
void log_verbose(std::string_view msg) {
    log(LogLevel::info, msg);
}
void log_debug(std::string_view msg) {
    log(LogLevel::debug, msg);
}

void write_task_stderr(std::string_view text) {
    while (!text.empty()) {
        const ssize_t n = ::write(STDERR_FILENO, text.data(), text.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;
        text.remove_prefix(static_cast<std::size_t>(n));
    }
}

}  // namespace sddp::plugin
