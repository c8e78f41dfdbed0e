// SPDX-License-Identifier: Apache-2.0
#include "topology/hwloc_topology.hpp"

#include <utility>

#if SDDP_HAVE_HWLOC
#include <hwloc.h>

#include <cstdlib>
#include <optional>
#include <string>
#endif

namespace sddp {

#if SDDP_HAVE_HWLOC

namespace {

// hwloc's GPU-driver components would load CUDA, NVML, OpenCL, ROCm SMI or Level Zero into the
// task before it execs (in slurmstepd's task_init): driver threads, device files and seconds of
// start-up, for facts the PCI and sysfs components already give. Components are dlopen'ed at
// hwloc_topology_init from this list in the process environment, so it is set around the call
// and restored (the plugin's task_init is single-threaded; the library does not load hwloc).
constexpr const char* kDriverPlugins =
    "hwloc_cuda,hwloc_nvml,hwloc_opencl,hwloc_rsmi,hwloc_levelzero,hwloc_gl";
constexpr const char* kDriverComponents[] = {"cuda", "nvml", "opencl", "rsmi", "levelzero", "gl"};

class DriverPluginsBlocked {
  public:
    DriverPluginsBlocked() {
        if (const char* old = std::getenv("HWLOC_PLUGINS_BLACKLIST")) old_ = old;
        std::string list = kDriverPlugins;
        if (old_ && !old_->empty()) list += "," + *old_;
        ::setenv("HWLOC_PLUGINS_BLACKLIST", list.c_str(), 1);
    }
    ~DriverPluginsBlocked() {
        if (old_) {
            ::setenv("HWLOC_PLUGINS_BLACKLIST", old_->c_str(), 1);
        } else {
            ::unsetenv("HWLOC_PLUGINS_BLACKLIST");
        }
    }
    DriverPluginsBlocked(const DriverPluginsBlocked&) = delete;
    DriverPluginsBlocked& operator=(const DriverPluginsBlocked&) = delete;

  private:
    std::optional<std::string> old_;
};

}  // namespace

Result<HwlocTopology> HwlocTopology::load(const std::string* xml_path) {
    hwloc_topology_t topo = nullptr;
    {
        const DriverPluginsBlocked blocked;
        if (hwloc_topology_init(&topo) != 0)
            return make_error(Errc::internal, "hwloc: cannot initialise a topology");
    }
    HwlocTopology owner(topo);  // destroys it on every early return below
    // Also when the plugins were already loaded (another topology alive in this process).
    for (const char* name : kDriverComponents)
        hwloc_topology_set_components(topo, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, name);
    if (xml_path != nullptr && hwloc_topology_set_xml(topo, xml_path->c_str()) != 0) {
        return make_error(Errc::io, "hwloc: cannot use topology file '" + *xml_path +
                                        "' (missing, or hwloc built without XML support)");
    }
    // GPUs and NICs are I/O objects, which hwloc drops by default; "important" keeps GPUs, NICs
    // and the bridges above them (which give PCI switch locality) without every PCI function.
    hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    if (hwloc_topology_load(topo) != 0) {
        return make_error(Errc::io, xml_path != nullptr
                                        ? "hwloc: cannot load topology file '" + *xml_path + "'"
                                        : std::string("hwloc: cannot discover this machine"));
    }
    return owner;
}

HwlocTopology::~HwlocTopology() {
    if (topo_ != nullptr) hwloc_topology_destroy(topo_);
}

#else

Result<HwlocTopology> HwlocTopology::load(const std::string*) {
    return make_error(Errc::unsupported, "topology: this build has no hwloc (SDDP_WITH_HWLOC)");
}

HwlocTopology::~HwlocTopology() = default;

#endif

Result<HwlocTopology> HwlocTopology::load_this_machine() {
    return load(nullptr);
}

Result<HwlocTopology> HwlocTopology::load_xml_file(const std::string& path) {
    return load(&path);
}

HwlocTopology::HwlocTopology(HwlocTopology&& other) noexcept
    : topo_(std::exchange(other.topo_, nullptr)) {}

HwlocTopology& HwlocTopology::operator=(HwlocTopology&& other) noexcept {
    if (this != &other) {
        HwlocTopology old(std::move(*this));
        topo_ = std::exchange(other.topo_, nullptr);
    }
    return *this;
}

}  // namespace sddp
