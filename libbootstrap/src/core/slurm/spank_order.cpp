// SPDX-License-Identifier: Apache-2.0
#include "core/slurm/spank_order.hpp"

#include <algorithm>

namespace sddp {
namespace {

std::string_view file_name(std::string_view path) {
    const auto slash = path.rfind('/');
    return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace

const std::vector<std::string>& pyxis_container_variables() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> v;
        for (const char* option : {"container_image", "container_name"}) {
            const std::string srun_form =
                std::string("_SLURM_SPANK_OPTION_") + kPyxisPluginName + "_" + option;
            v.push_back(srun_form);
            v.push_back("SLURM_SPANK_" + srun_form);
        }
        v.emplace_back("PYXIS_CONTAINER_IMAGE");
        v.emplace_back("PYXIS_CONTAINER_NAME");
        return v;
    }();
    return names;
}

std::optional<std::string> plugin_loaded_after(const std::vector<LoadedObject>& objects,
                                               std::string_view self_path,
                                               std::string_view plugin) {
    const auto self = std::find_if(objects.begin(), objects.end(),
                                   [&](const LoadedObject& o) { return o.path == self_path; });
    if (self == objects.end()) return std::nullopt;
    const auto after = std::find_if(std::next(self), objects.end(),
                                    [&](const LoadedObject& o) { return o.plugin_name == plugin; });
    if (after == objects.end()) return std::nullopt;
    return after->path;
}

std::string pyxis_order_error(std::string_view self_path, std::string_view pyxis_path) {
    const std::string self(file_name(self_path));
    const std::string pyxis(file_name(pyxis_path));
    return self + " is listed before " + pyxis + " (" + std::string(pyxis_path) +
           ") in plugstack.conf, so pyxis would overwrite this step's variables with its "
           "container's (the image's MASTER_ADDR and MASTER_PORT, one task's RANK for all): an "
           "admin must list " +
           self + " after " + pyxis + " in plugstack.conf";
}

}  // namespace sddp
