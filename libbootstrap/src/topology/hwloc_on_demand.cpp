// SPDX-License-Identifier: Apache-2.0
// The hwloc functions the topology code calls, for the plugin only: each one loads libhwloc on
// first use and calls the real one. Slurm loads the plugin into every srun, sbatch and
// slurmstepd of the site; linked against libhwloc, it brought libhwloc and libudev into all of
// them. Now only a --ddp task that reads its topology (gpu-bind=closest) loads them.
//
// The library and the CLI link libhwloc itself; the set below is what the topology objects
// import (`nm -u`), checked by the plugin host, which finds libhwloc unloaded after a step
// without --ddp and loaded by gpu-bind=closest.
#include <hwloc.h>

#include "os/shared_library.hpp"

namespace {

// libhwloc's soname for the API the plugin was compiled against (hwloc 2.x: 15).
#if HWLOC_API_VERSION >= 0x00020000
constexpr const char* kHwlocLibrary = "libhwloc.so.15";
#else
#error "hwloc 1.x is not supported"
#endif

// Loaded as a linked libhwloc was, in the plugin's local scope and unloaded with the plugin (a
// static's destructor runs at dlclose). In that scope hwloc's own component plugins (hwloc_pci.so)
// do not find its symbols and stay off, as before; RTLD_GLOBAL would turn them on, and with them
// libpciaccess, which leaks (valgrind, plugin_host_valgrind): a separate change.
const sddp::SharedLibrary& library() {
    static const sddp::SharedLibrary lib = [] {
        auto opened = sddp::SharedLibrary::open({kHwlocLibrary});
        return opened ? std::move(*opened) : sddp::SharedLibrary();
    }();
    return lib;
}

template <typename Fn>
Fn real(const char* name) {
    Fn fn = nullptr;
    library().bind(name, fn);
    return fn;
}

// Each forwarder looks its function up once; a missing library makes hwloc_topology_init fail
// (the caller reports "hwloc: cannot initialise a topology"), so no other one is reached.
#define SDDP_HWLOC_CALL(ret, fail, name, params, args) \
    ret name params {                                  \
        using Fn = ret(*) params;                      \
        static const Fn fn = real<Fn>(#name);          \
        return fn != nullptr ? fn args : fail;         \
    }

}  // namespace

extern "C" {
SDDP_HWLOC_CALL(int, -1, hwloc_topology_init, (hwloc_topology_t * topology), (topology))
SDDP_HWLOC_CALL(int, -1, hwloc_topology_load, (hwloc_topology_t topology), (topology))
SDDP_HWLOC_CALL(int, -1, hwloc_topology_set_xml, (hwloc_topology_t topology, const char* path),
                (topology, path))
SDDP_HWLOC_CALL(int, -1, hwloc_topology_set_components,
                (hwloc_topology_t topology, unsigned long flags, const char* name),
                (topology, flags, name))
SDDP_HWLOC_CALL(int, -1, hwloc_topology_set_io_types_filter,
                (hwloc_topology_t topology, enum hwloc_type_filter_e filter), (topology, filter))
SDDP_HWLOC_CALL(int, HWLOC_TYPE_DEPTH_UNKNOWN, hwloc_get_type_depth,
                (hwloc_topology_t topology, hwloc_obj_type_t type), (topology, type))
SDDP_HWLOC_CALL(unsigned, 0, hwloc_get_nbobjs_by_depth, (hwloc_topology_t topology, int depth),
                (topology, depth))
SDDP_HWLOC_CALL(hwloc_obj_t, nullptr, hwloc_get_obj_by_depth,
                (hwloc_topology_t topology, int depth, unsigned idx), (topology, depth, idx))
SDDP_HWLOC_CALL(int, -1, hwloc_bitmap_first, (hwloc_const_bitmap_t bitmap), (bitmap))
SDDP_HWLOC_CALL(int, 0, hwloc_bitmap_weight, (hwloc_const_bitmap_t bitmap), (bitmap))

void hwloc_topology_destroy(hwloc_topology_t topology) {
    using Fn = void (*)(hwloc_topology_t);
    static const Fn fn = real<Fn>("hwloc_topology_destroy");
    if (fn != nullptr) fn(topology);
}
}  // extern "C"
