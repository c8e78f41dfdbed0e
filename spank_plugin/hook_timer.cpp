// SPDX-License-Identifier: Apache-2.0
#include "hook_timer.hpp"

#include "plugin_log.hpp"

namespace sddp::plugin {

std::string format_hook_times(std::initializer_list<std::pair<const char*, HookTime>> hooks) {
    std::string text;
    std::int64_t total_us = 0;
    std::int64_t cpu_ns = 0;
    for (const auto& [name, t] : hooks) {
        const std::int64_t us = t.wall_ns / 1000;
        total_us += us;
        cpu_ns += t.cpu_ns;
        if (!text.empty()) text += ", ";
        text += std::string(name) + " " + std::to_string(us) + " us";
    }
    return text + " (total " + std::to_string(total_us) + " us, cpu " +
           std::to_string(cpu_ns / 1000) + " us)";
}

void log_plugin_time(const std::string& who, const std::string& times) {
    log_verbose(who + ": plugin time " + times);
}

}  // namespace sddp::plugin
