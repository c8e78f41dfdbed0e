# SPDX-License-Identifier: Apache-2.0
# Which archives libslurm_ddp.so can carry under SDDP_SELF_CONTAINED (top-level
# CMakeLists.txt). Sets:
#   SDDP_STATIC_CXX_RUNTIME  ON when libstdc++.a and libgcc link into a shared object here
#   SDDP_NETTLE_LINK         what the os layer links for Nettle: libnettle.a when it links into a
#                            shared object (the linker then takes only the SHA-256, HMAC and
#                            compare objects), else PkgConfig::NETTLE (the shared library)
# Each check links a shared object as the library is linked (PIC, archives' symbols local,
# -z defs so that a symbol the archive does not provide fails the check instead of staying
# undefined); where one fails, that part stays shared and the configure log says so.
include(CheckCXXSourceCompiles)
include(CMakePushCheckState)

set(SDDP_STATIC_CXX_RUNTIME OFF)
set(SDDP_NETTLE_LINK PkgConfig::NETTLE)
# The sanitizers' runtimes expect the shared C++ runtime.
if(NOT SDDP_SELF_CONTAINED OR SDDP_SANITIZE)
  message(STATUS "slurm-ddp: libslurm_ddp.so over the shared C++ runtime and Nettle "
                 "(SDDP_SELF_CONTAINED=${SDDP_SELF_CONTAINED}, "
                 "SDDP_SANITIZE='${SDDP_SANITIZE}')")
  return()
endif()

cmake_push_check_state(RESET)
set(CMAKE_REQUIRED_FLAGS -fPIC)
set(CMAKE_REQUIRED_QUIET ON)
set(CMAKE_REQUIRED_LINK_OPTIONS -shared -Wl,-z,defs -Wl,--exclude-libs,ALL -static-libstdc++
                                -static-libgcc)
check_cxx_source_compiles([[
#include <stdexcept>
#include <string>
std::string sddp_probe(const char* s) {
    if (s == nullptr) throw std::invalid_argument("null");
    return s;
}
int main() { return 0; }
]] SDDP_LINKS_STATIC_CXX_RUNTIME)
set(SDDP_STATIC_CXX_RUNTIME ${SDDP_LINKS_STATIC_CXX_RUNTIME})

if(SDDP_CRYPTO STREQUAL "nettle")
  get_filename_component(_nettle_dir "${NETTLE_LIBRARY}" DIRECTORY)
  find_library(SDDP_NETTLE_ARCHIVE NAMES libnettle.a
               HINTS ${NETTLE_LIBRARY_DIRS} ${NETTLE_LIBDIR} ${_nettle_dir})
  if(SDDP_NETTLE_ARCHIVE)
    get_target_property(_nettle_inc PkgConfig::NETTLE INTERFACE_INCLUDE_DIRECTORIES)
    if(_nettle_inc)
      set(CMAKE_REQUIRED_INCLUDES ${_nettle_inc})
    endif()
    set(CMAKE_REQUIRED_LIBRARIES ${SDDP_NETTLE_ARCHIVE})
    check_cxx_source_compiles([[
#include <nettle/hmac.h>
#include <nettle/memops.h>
int sddp_probe(const unsigned char* k, unsigned char* out) {
    hmac_sha256_ctx c;
    hmac_sha256_set_key(&c, 32, k);
    hmac_sha256_digest(&c, 32, out);
    return memeql_sec(k, out, 32);
}
int main() { return 0; }
]] SDDP_LINKS_NETTLE_ARCHIVE)
    if(SDDP_LINKS_NETTLE_ARCHIVE)
      add_library(sddp_nettle_archive INTERFACE IMPORTED)
      if(_nettle_inc)
        target_include_directories(sddp_nettle_archive INTERFACE ${_nettle_inc})
      endif()
      target_link_libraries(sddp_nettle_archive INTERFACE ${SDDP_NETTLE_ARCHIVE})
      set(SDDP_NETTLE_LINK sddp_nettle_archive)
    endif()
  endif()
endif()
cmake_pop_check_state()

set(_cxx "shared (no libstdc++.a that links into a shared object)")
if(SDDP_STATIC_CXX_RUNTIME)
  set(_cxx "inside")
endif()
set(_nettle "")
if(SDDP_CRYPTO STREQUAL "nettle")
  set(_nettle "; Nettle shared (no libnettle.a that links into a shared object)")
  if(SDDP_NETTLE_LINK STREQUAL "sddp_nettle_archive")
    set(_nettle "; Nettle's HMAC inside (${SDDP_NETTLE_ARCHIVE})")
  endif()
endif()
message(STATUS "slurm-ddp: self-contained libslurm_ddp.so: C++ runtime ${_cxx}${_nettle}")
