// SPDX-License-Identifier: Apache-2.0
#include "stacks/stacks_tools.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include "core/contract/contract.hpp"
#include "stacks/stacks_trust.hpp"

namespace sddp::stacks {
namespace {

std::optional<std::string> our_env(const char* name) {
    const char* v = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): before any thread
    if (!v) return std::nullopt;
    return std::string(v);
}

std::string dir_of(const std::string& path) {
    const auto slash = path.rfind('/');
    return slash == std::string::npos || slash == 0 ? std::string() : path.substr(0, slash);
}

std::string on_path(const NodeTools& node, const std::string& name,
                    std::vector<std::string>& refused) {
    auto picked = pick_executable(path_candidates(name, node.our_path.value_or("")), node.as_root);
    refused.insert(refused.end(), picked.refused.begin(), picked.refused.end());
    return picked.path;
}

bool is_file(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace

NodeTools find_node_tools() {
    NodeTools node;
    node.as_root = ::geteuid() == 0;
    node.our_pyspy = our_env(contract::kPyspyVar);
    node.our_path = our_env("PATH");
    node.gdb = on_path(node, "gdb", node.refused);
    node.eu_stack = on_path(node, "eu-stack", node.refused);
    node.scontrol = on_path(node, "scontrol", node.refused);
    if (!node.gdb.empty()) {
        char buf[4096];
        const char* real = ::realpath(node.gdb.c_str(), buf);
        // gdb's data folder is PREFIX/share/gdb for PREFIX/bin/gdb (/usr/bin/gdb: /usr/share/gdb).
        const std::string prefix = dir_of(dir_of(real ? std::string(real) : node.gdb));
        node.gdb_datadir = prefix + "/share/gdb";
    }
    return node;
}

ToolsFound tools_for(const NodeTools& node, const ProcessFacts& p,
                     std::vector<std::string>& refused) {
    ToolsFound found;
    found.gdb = node.gdb;
    found.eu_stack = node.eu_stack;
    if (!p.python) return found;
    auto pyspy = pick_executable(pyspy_candidates(node.our_pyspy, p, node.our_path, node.as_root),
                                 node.as_root);
    found.pyspy = pyspy.path;
    if (found.pyspy.empty()) refused = pyspy.refused;
    if (node.gdb.empty()) return found;
    for (const auto& script : python_gdb_scripts(p.exe, p.libpython, node.gdb_datadir)) {
        if (!is_file(script.path)) continue;
        if (script.beside) {
            // gdb runs the extension's Python code: as root, only one root alone can have put
            // there. gdb's own auto-load folders belong to its installation.
            if (node.as_root && !trusted_file(script.path)) continue;
            found.gdb_script = script.path;
        }
        found.gdb_python = true;
        break;
    }
    return found;
}

}  // namespace sddp::stacks
