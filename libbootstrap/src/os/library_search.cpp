// SPDX-License-Identifier: Apache-2.0
#include "os/library_search.hpp"

#include <glob.h>
#include <unistd.h>

#include <algorithm>
#include <string_view>

namespace sddp {
namespace {

// The folders of a colon-separated list, empty entries skipped, trailing slashes dropped.
std::vector<std::string> split_path(std::string_view list) {
    std::vector<std::string> out;
    while (!list.empty()) {
        const auto colon = list.find(':');
        std::string dir(list.substr(0, colon));
        list = colon == std::string_view::npos ? std::string_view() : list.substr(colon + 1);
        while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
        if (!dir.empty()) out.push_back(std::move(dir));
    }
    return out;
}

void add_globbed(std::vector<std::string>& out, const std::string& pattern) {
    glob_t g{};
    if (::glob(pattern.c_str(), GLOB_ONLYDIR, nullptr, &g) == 0) {
        for (std::size_t i = 0; i < g.gl_pathc; ++i) out.emplace_back(g.gl_pathv[i]);
    }
    ::globfree(&g);
}

// PREFIX/lib/python3.*/site-packages (and dist-packages, Debian's name), sorted: one per Python
// version installed there. Debian's and Ubuntu's /usr/bin/python3 keeps what pip installs
// under /usr/local.
std::vector<std::string> site_packages_under(const std::string& prefix) {
    std::vector<std::string> out;
    const bool system = prefix == "/usr";
    for (const std::string& p : system ? std::vector<std::string>{"/usr/local", "/usr"}
                                       : std::vector<std::string>{prefix}) {
        add_globbed(out, p + "/lib/python3*/site-packages");
        add_globbed(out, p + "/lib/python3*/dist-packages");
    }
    return out;
}

// The folder above the bin/ of the first python3 on `path`. A venv's bin/python3 is a link to
// the base interpreter: the link's own folder is the environment's, so it is not resolved.
std::string python_prefix(std::string_view path) {
    for (const auto& dir : split_path(path)) {
        if (::access((dir + "/python3").c_str(), X_OK) != 0) continue;
        const auto slash = dir.rfind('/');
        return slash == std::string::npos || slash == 0 ? std::string() : dir.substr(0, slash);
    }
    return std::string();
}

void add_once(std::vector<std::string>& out, std::string item) {
    if (std::find(out.begin(), out.end(), item) == out.end()) out.push_back(std::move(item));
}

// DIR/FILE when it exists.
void add_if_there(std::vector<std::string>& out, std::string dir, const std::string& file) {
    dir.append("/").append(file);
    if (::access(dir.c_str(), F_OK) == 0) add_once(out, std::move(dir));
}

}  // namespace

std::vector<std::string> python_site_packages(const EnvLookup& env) {
    std::vector<std::string> prefixes;
    for (const char* var : {"VIRTUAL_ENV", "CONDA_PREFIX"}) {
        if (auto v = env(var); v && !v->empty()) prefixes.push_back(*v);
    }
    if (auto path = env("PATH")) {
        if (auto p = python_prefix(*path); !p.empty()) prefixes.push_back(p);
    }
    // pip install --user
    if (auto home = env("HOME"); home && !home->empty()) prefixes.push_back(*home + "/.local");
    std::vector<std::string> out;
    for (const auto& prefix : prefixes) {
        for (auto& site : site_packages_under(prefix)) add_once(out, std::move(site));
    }
    return out;
}

std::vector<std::string> library_candidates(const EnvLookup& env, const std::string& file,
                                            const std::vector<std::string>& wheel_dirs) {
    std::vector<std::string> out;
    if (auto ld = env("LD_LIBRARY_PATH")) {
        for (auto& dir : split_path(*ld)) add_if_there(out, std::move(dir), file);
    }
    for (const auto& site : python_site_packages(env)) {
        for (const auto& rel : wheel_dirs)
            add_if_there(out, std::string(site).append("/").append(rel), file);
    }
    add_once(out, file);
    return out;
}

}  // namespace sddp
