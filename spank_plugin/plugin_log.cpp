#include "plugin_log.hpp"

#include <unistd.h>

#include <cerrno>
#include <string>

#include "plugin_state.hpp"
#include "spank_api.hpp"

namespace sddp::plugin {
namespace {

// Slurm's log functions are printf-like: pass the text as an argument, never as the format.
std::string line(std::string_view msg) {
    return std::string(kPluginName) + ": " + std::string(msg);
}

}  // namespace

void log_error(std::string_view msg) {
    slurm_error("%s", line(msg).c_str());
}
void log_info(std::string_view msg) {
    slurm_info("%s", line(msg).c_str());
}
void log_verbose(std::string_view msg) {
    slurm_verbose("%s", line(msg).c_str());
}
void log_debug(std::string_view msg) {
    slurm_debug("%s", line(msg).c_str());
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
