#include "topology/hwloc_topology.hpp"

#include <utility>

#if SDDP_HAVE_HWLOC
#include <hwloc.h>
#endif

namespace sddp {

#if SDDP_HAVE_HWLOC

Result<HwlocTopology> HwlocTopology::load(const std::string* xml_path) {
    hwloc_topology_t topo = nullptr;
    if (hwloc_topology_init(&topo) != 0)
        return make_error(Errc::internal, "hwloc: cannot initialise a topology");
    HwlocTopology owner(topo);  // destroys it on every early return below
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
