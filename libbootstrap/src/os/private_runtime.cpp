// SPDX-License-Identifier: Apache-2.0
// Compiled into a shared object that links the C++ runtime in (sddp_link_self_contained in
// libbootstrap/CMakeLists.txt: the plugin, libslurm_ddp.so). Such an object carries its own
// libstdc++, whose emergency exception pool (~72 KiB, allocated as the object is loaded) nothing
// frees: every dlopen/dlclose (slurmd on reconfigure, the plugin test host's thousands) would
// leak one. libstdc++ frees it in __gnu_cxx::__freeres, which only valgrind calls; the object
// calls its own copy's as it is unloaded. Never with the shared runtime: that pool is the whole
// process's.
#ifdef SDDP_STATIC_CXX_RUNTIME

// NOLINTBEGIN(bugprone-reserved-identifier): the runtime's own name, declared to call it
namespace __gnu_cxx {
void __freeres() noexcept;  // libstdc++'s eh_alloc.cc; declared in no public header
}  // namespace __gnu_cxx
// NOLINTEND(bugprone-reserved-identifier)

namespace {

__attribute__((destructor)) void free_private_runtime() {
    __gnu_cxx::__freeres();
}

}  // namespace

#endif
