// SPDX-License-Identifier: Apache-2.0
// An hwloc topology, owned (RAII), loaded with PCI and OS devices kept.
//
// The only place that touches hwloc_topology_t, so that the binding logic stays in the pure core
// and builds without hwloc (SDDP_HAVE_HWLOC unset: every load returns Errc::unsupported).
#pragma once

#include <string>

#include "core/base/result.hpp"

struct hwloc_topology;  // hwloc's opaque type, so this header does not need hwloc.h

namespace sddp {

class HwlocTopology {
  public:
    // This machine; hwloc itself honours HWLOC_XMLFILE / HWLOC_SYNTHETIC when they are set.
    static Result<HwlocTopology> load_this_machine();
    // A saved `lstopo --of xml` file (tests, or a site's reference topology).
    static Result<HwlocTopology> load_xml_file(const std::string& path);

    HwlocTopology(HwlocTopology&& other) noexcept;
    HwlocTopology& operator=(HwlocTopology&& other) noexcept;
    HwlocTopology(const HwlocTopology&) = delete;
    HwlocTopology& operator=(const HwlocTopology&) = delete;
    ~HwlocTopology();

    hwloc_topology* get() const { return topo_; }

  private:
    explicit HwlocTopology(hwloc_topology* topo) : topo_(topo) {}
    static Result<HwlocTopology> load(const std::string* xml_path);
    hwloc_topology* topo_ = nullptr;
};

}  // namespace sddp
