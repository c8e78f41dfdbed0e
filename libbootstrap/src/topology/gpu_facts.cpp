// SPDX-License-Identifier: Apache-2.0
#include "topology/gpu_facts.hpp"

#include <algorithm>
#include <cstdio>

#include "topology/nvidia_driver.hpp"

#if SDDP_HAVE_HWLOC
#include <hwloc.h>
#endif

namespace sddp {

#if SDDP_HAVE_HWLOC
namespace {

constexpr unsigned kNvidiaVendor = 0x10de;
constexpr unsigned kDisplayClass = 0x03;  // high byte of class_id: VGA, 3D controller, ...

std::string bus_id_of(const hwloc_obj_t pci) {
    char buf[32];
    const auto& a = pci->attr->pcidev;
    std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.%01x", a.domain, a.bus, a.dev, a.func);
    return buf;
}

struct Locality {
    int numa = -1;
    int package = -1;
    std::string pci_switch;
};

// Locality of an I/O object: the NUMA node and package of its first CPU-side ancestor, and the
// top-most PCI-to-PCI bridge under its host bridge (a PCIe switch's upstream port), which two
// devices share exactly when they sit behind the same switch.
Locality locality_of(hwloc_topology_t topo, hwloc_obj_t obj) {
    Locality l;
    hwloc_obj_t p = obj->parent;
    while (p != nullptr && (p->type == HWLOC_OBJ_PCI_DEVICE || p->type == HWLOC_OBJ_OS_DEVICE))
        p = p->parent;  // an OS device (mlx5_0) hangs below its PCI function
    for (; p != nullptr && p->type == HWLOC_OBJ_BRIDGE; p = p->parent) {
        if (p->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_PCI) {
            char buf[32];
            const auto& u = p->attr->bridge.upstream.pci;
            std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.%01x", u.domain, u.bus, u.dev, u.func);
            l.pci_switch = buf;
        }
    }
    const hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(topo, obj);
    if (anc == nullptr) return l;
    if (anc->nodeset != nullptr && hwloc_bitmap_weight(anc->nodeset) == 1)
        l.numa = hwloc_bitmap_first(anc->nodeset);
    for (hwloc_obj_t a = anc; a != nullptr; a = a->parent) {
        if (a->type == HWLOC_OBJ_PACKAGE) {
            l.package = static_cast<int>(a->os_index);
            break;
        }
    }
    return l;
}

void read_cpu_maps(hwloc_topology_t topo, GpuTopologyFacts& facts) {
    const int npu = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
    for (int i = 0; i < npu; ++i) {
        const hwloc_obj_t pu = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, static_cast<unsigned>(i));
        const auto cpu = static_cast<std::size_t>(pu->os_index);
        if (cpu >= 65536) continue;  // os indices are dense in practice; never grow unbounded
        if (facts.numa_of_cpu.size() <= cpu) {
            facts.numa_of_cpu.resize(cpu + 1, -1);
            facts.package_of_cpu.resize(cpu + 1, -1);
        }
        if (pu->nodeset != nullptr && hwloc_bitmap_weight(pu->nodeset) == 1)
            facts.numa_of_cpu[cpu] = hwloc_bitmap_first(pu->nodeset);
        if (const hwloc_obj_t pkg = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_PACKAGE, pu))
            facts.package_of_cpu[cpu] = static_cast<int>(pkg->os_index);
    }
}

}  // namespace

Result<GpuTopologyFacts> gpu_facts_from_topology(const HwlocTopology& topology) {
    hwloc_topology_t topo = topology.get();
    GpuTopologyFacts facts;
    for (hwloc_obj_t pci = hwloc_get_next_pcidev(topo, nullptr); pci != nullptr;
         pci = hwloc_get_next_pcidev(topo, pci)) {
        const auto& a = pci->attr->pcidev;
        if (a.vendor_id != kNvidiaVendor || (a.class_id >> 8) != kDisplayClass) continue;
        const Locality l = locality_of(topo, pci);
        GpuFact g;
        g.pci_bus_id = bus_id_of(pci);
        g.numa = l.numa;
        g.package = l.package;
        g.pci_switch = l.pci_switch;
        facts.gpus.push_back(g);
    }
    std::sort(facts.gpus.begin(), facts.gpus.end(),
              [](const GpuFact& x, const GpuFact& y) { return x.pci_bus_id < y.pci_bus_id; });
    for (std::size_t i = 0; i < facts.gpus.size(); ++i) facts.gpus[i].index = static_cast<int>(i);

    for (hwloc_obj_t os = hwloc_get_next_osdev(topo, nullptr); os != nullptr;
         os = hwloc_get_next_osdev(topo, os)) {
        const auto type = os->attr->osdev.type;
        if (type != HWLOC_OBJ_OSDEV_OPENFABRICS && type != HWLOC_OBJ_OSDEV_NETWORK) continue;
        if (os->name == nullptr) continue;
        const Locality l = locality_of(topo, os);
        NicFact n;
        n.name = os->name;
        n.kind = type == HWLOC_OBJ_OSDEV_OPENFABRICS ? NicKind::hca : NicKind::netdev;
        if (os->parent != nullptr && os->parent->type == HWLOC_OBJ_PCI_DEVICE)
            n.pci_bus_id = bus_id_of(os->parent);
        n.numa = l.numa;
        n.package = l.package;
        n.pci_switch = l.pci_switch;
        facts.nics.push_back(n);
    }
    std::sort(facts.nics.begin(), facts.nics.end(),
              [](const NicFact& x, const NicFact& y) { return x.name < y.name; });
    read_cpu_maps(topo, facts);
    return facts;
}

#else

Result<GpuTopologyFacts> gpu_facts_from_topology(const HwlocTopology&) {
    return make_error(Errc::unsupported, "topology: this build has no hwloc (SDDP_WITH_HWLOC)");
}

#endif

GpuTopologyFacts read_node_gpu_facts(const NodeFactsSource& source, std::string* note) {
    GpuTopologyFacts facts;
    auto topo = source.xml_path ? HwlocTopology::load_xml_file(*source.xml_path)
                                : HwlocTopology::load_this_machine();
    if (topo.ok()) {
        auto f = gpu_facts_from_topology(*topo);
        if (f.ok())
            facts = std::move(f.value());
        else if (note != nullptr)
            *note = f.error().message;
    } else if (note != nullptr) {
        *note = topo.error().message;
    }
    merge_driver_facts(facts, read_nvidia_driver_gpus(source.driver_gpus_dir));
    return facts;
}

}  // namespace sddp
