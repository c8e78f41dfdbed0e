// SPDX-License-Identifier: Apache-2.0
#include "core/slurm/plugstack.hpp"

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
            scan.includes_before_plugin = scan.includes.size();
        }
    }
    return scan;
}

std::string include_pattern(std::string_view including_file, std::string_view pattern) {
    if (!pattern.empty() && pattern.front() == '/') return std::string(pattern);
    // dirname(3): "plugstack.conf" -> ".", "/plugstack.conf" -> "/".
    const std::size_t slash = including_file.rfind('/');
    std::string dir = slash == std::string_view::npos ? std::string(".")
                      : slash == 0                    ? std::string("/")
                                   : std::string(including_file.substr(0, slash));
    if (dir.back() != '/') dir += '/';
    return dir + std::string(pattern);
}

std::optional<std::string> plugstack_setting(std::string_view text) {
    constexpr std::string_view kKey = "plugstackconfig";
    std::optional<std::string> value;
    while (!text.empty()) {
        const std::size_t nl = text.find('\n');
        std::string_view line = text.substr(0, nl);
        text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
        line = line.substr(0, line.find('#'));
        const std::size_t start = line.find_first_not_of(" \t");
        if (start == std::string_view::npos) continue;
        line = line.substr(start);
        const std::size_t eq = line.find('=');
        if (eq == std::string_view::npos) continue;
        std::string_view key = line.substr(0, eq);
        while (!key.empty() && (key.back() == ' ' || key.back() == '\t')) key.remove_suffix(1);
        if (key.size() != kKey.size()) continue;
        bool same = true;
        for (std::size_t i = 0; i < key.size(); ++i) {
            const char c =
                key[i] >= 'A' && key[i] <= 'Z' ? static_cast<char>(key[i] - 'A' + 'a') : key[i];
            same = same && c == kKey[i];
        }
        if (!same) continue;
        auto w = words(line.substr(eq + 1));
        if (w.empty()) continue;
        std::string v = w.front();
        if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
        value = v;
    }
    return value;
}

std::string default_plugstack_path(std::string_view slurm_conf_path) {
    return include_pattern(slurm_conf_path, "plugstack.conf");
}

}  // namespace sddp
