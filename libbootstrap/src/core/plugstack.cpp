// SPDX-License-Identifier: Apache-2.0
#include "core/plugstack.hpp"

namespace sddp {
namespace {

std::vector<std::string> words(std::string_view line) {
    std::vector<std::string> out;
    std::size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
        const std::size_t start = i;
        while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
        if (i > start) out.emplace_back(line.substr(start, i - start));
    }
    return out;
}

bool names_plugin(std::string_view path) {
    const std::string_view file = path.substr(path.rfind('/') + 1);  // npos + 1 == 0
    return file == kPluginFileName;
}

}  // namespace

PlugstackScan scan_plugstack(std::string_view text) {
    PlugstackScan scan;
    while (!text.empty()) {
        const std::size_t nl = text.find('\n');
        std::string_view line = text.substr(0, nl);
        text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
        line = line.substr(0, line.find('#'));
        auto w = words(line);
        if (w.empty()) continue;
        if (w[0] == "include" && w.size() >= 2) {
            scan.includes.push_back(w[1]);
        } else if ((w[0] == "required" || w[0] == "optional") && w.size() >= 2 &&
                   names_plugin(w[1]) && !scan.plugin_args) {
            scan.plugin_args = std::vector<std::string>(w.begin() + 2, w.end());
        }
    }
    return scan;
}

}  // namespace sddp
