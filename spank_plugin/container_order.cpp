// SPDX-License-Identifier: Apache-2.0
#include "container_order.hpp"

#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "core/slurm/spank_order.hpp"
#include "spank_env.hpp"

namespace sddp::plugin {
namespace {

std::optional<std::string>& kept_problem() {
    static std::optional<std::string> problem;
    return problem;
}

// The SPANK plugin_name of a loaded object, empty when it has none. RTLD_NOLOAD only takes a
// reference to what is already there; a plugin_name found in one of the object's dependencies
// is not its own.
std::string plugin_name_of(const std::string& path) {
    void* handle = dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD);
    if (handle == nullptr) return {};
    std::string name;
    const void* symbol = dlsym(handle, "plugin_name");
    Dl_info where{};
    if (symbol != nullptr && dladdr(symbol, &where) != 0 && where.dli_fname != nullptr &&
        path == where.dli_fname) {
        name = static_cast<const char*>(symbol);
    }
    dlclose(handle);
    return name;
}

// Every object of this process in load order, which for SPANK plugins is plugstack.conf order.
// Names are read only after dl_iterate_phdr returns: dlopen may not be called from its callback.
std::vector<LoadedObject> loaded_objects() {
    std::vector<LoadedObject> objects;
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t /*size*/, void* data) {
            if (info->dlpi_name != nullptr && info->dlpi_name[0] != '\0') {
                static_cast<std::vector<LoadedObject>*>(data)->push_back({info->dlpi_name, {}});
            }
            return 0;
        },
        &objects);
    for (auto& o : objects) o.plugin_name = plugin_name_of(o.path);
    return objects;
}

}  // namespace

void note_container_order(spank_t sp) {
    kept_problem().reset();
    const EnvLookup env = spank_env(sp);
    const auto& names = pyxis_container_variables();
    if (std::none_of(names.begin(), names.end(),
                     [&](const std::string& n) { return env(n).has_value(); }))
        return;
    Dl_info self{};
    if (dladdr(reinterpret_cast<const void*>(&note_container_order), &self) == 0 ||
        self.dli_fname == nullptr)
        return;
    if (auto pyxis = plugin_loaded_after(loaded_objects(), self.dli_fname, kPyxisPluginName))
        kept_problem() = pyxis_order_error(self.dli_fname, *pyxis);
}

std::optional<std::string> container_order_problem() {
    return kept_problem();
}

}  // namespace sddp::plugin
