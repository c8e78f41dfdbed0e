// SPDX-License-Identifier: Apache-2.0
#include "os/plugstack_file.hpp"

#include <glob.h>
#include <unistd.h>

#include "core/slurm/plugstack.hpp"
#include "os/host_files.hpp"

namespace sddp {
namespace {

constexpr std::size_t kMaxConfigBytes = 1 << 20;
constexpr int kMaxIncludeDepth = 8;  // a loop of includes must end; Slurm's own never nest deep

// Every file `pattern` names, sorted (glob's order, as Slurm's); none when it matches nothing.
std::vector<std::string> glob_files(const std::string& pattern) {
    std::vector<std::string> out;
    glob_t g{};
    if (::glob(pattern.c_str(), 0, nullptr, &g) == 0) {
        for (std::size_t i = 0; i < g.gl_pathc; ++i) out.emplace_back(g.gl_pathv[i]);
    }
    ::globfree(&g);
    return out;
}

std::optional<std::vector<std::string>> arguments_in(const std::string& path, int depth,
                                                     std::string* why) {
    auto text = read_small_file(path, kMaxConfigBytes);
    if (!text) {
        if (depth == 0) *why = "cannot read " + path;
        return std::nullopt;
    }
    const PlugstackScan scan = scan_plugstack(*text);
    // Includes above the plugin's line load first; Slurm keeps the first line naming the plugin.
    const std::size_t before =
        scan.plugin_args ? scan.includes_before_plugin : scan.includes.size();
    if (depth < kMaxIncludeDepth) {
        for (std::size_t i = 0; i < before; ++i) {
            for (const auto& file : glob_files(include_pattern(path, scan.includes[i]))) {
                // cppcheck-suppress useStlAlgorithm ; the first file's arguments are the result
                if (auto args = arguments_in(file, depth + 1, why)) return args;
            }
        }
    }
    if (scan.plugin_args) return scan.plugin_args;
    if (depth == 0 && why->empty())
        *why = "no line naming " + std::string(kPluginFileName) + " in " + path;
    return std::nullopt;
}

}  // namespace

std::string site_plugstack_path(const EnvLookup& env, std::string* from) {
    std::string conf = kDefaultSlurmConf;
    if (auto v = env("SLURM_CONF"); v && !v->empty()) {
        conf = *v;
    } else if (::access(kConfiglessSlurmConf, R_OK) == 0) {
        conf = kConfiglessSlurmConf;
    }
    if (auto text = read_small_file(conf, kMaxConfigBytes)) {
        if (auto setting = plugstack_setting(*text)) {
            *from = "PlugStackConfig in " + conf;
            return *setting;
        }
    }
    *from = "beside " + conf;
    return default_plugstack_path(conf);
}

std::optional<std::vector<std::string>> plugstack_plugin_arguments(const std::string& path,
                                                                   std::string* why) {
    why->clear();
    return arguments_in(path, 0, why);
}

}  // namespace sddp
