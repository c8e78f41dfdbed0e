# SPDX-License-Identifier: Apache-2.0
# The C++ runtime (libstdc++, libgcc) linked into a shared object instead of loaded beside it.
#
# Slurm loads the SPANK plugin into every srun, sbatch and slurmstepd, C programs that do not
# load libstdc++ themselves: with the runtime as a dependency the dynamic linker maps and
# relocates libstdc++, libm and libgcc_s in each of them, ~1.6 M instructions per process for a
# step that never asked for --ddp, 14 % of `srun -n1 true`'s own (bench/overhead/
# plugin_load_cost.sh). Linked in, with every symbol but the SPANK hooks hidden (the version
# script), the plugin costs such a step ~0.1 M. No C++ object crosses the plugin's C interface,
# so its private copy of the runtime cannot meet the host's.
#
# SDDP_STATIC_CXX_RUNTIME: AUTO (default: on where the toolchain can link libstdc++.a into a
# shared object; RHEL needs libstdc++-static), ON (an error where it cannot), OFF.
set(SDDP_STATIC_CXX_RUNTIME "AUTO" CACHE STRING
    "Link libstdc++/libgcc into the SPANK plugin: AUTO, ON or OFF")
set_property(CACHE SDDP_STATIC_CXX_RUNTIME PROPERTY STRINGS AUTO ON OFF)

set(SDDP_HAVE_STATIC_CXX_RUNTIME OFF)
if(NOT SDDP_STATIC_CXX_RUNTIME STREQUAL "OFF" AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU"
   AND NOT SDDP_SANITIZE)
  include(CheckCXXSourceCompiles)
  # Compiled as a shared object's code is (-fPIC; the project's PIE default would override it).
  set(_sddp_pic ${CMAKE_POSITION_INDEPENDENT_CODE})
  set(CMAKE_POSITION_INDEPENDENT_CODE OFF)
  set(CMAKE_REQUIRED_FLAGS "-fPIC")
  set(CMAKE_REQUIRED_LINK_OPTIONS -shared -static-libstdc++ -static-libgcc)
  check_cxx_source_compiles("#include <string>
    #include <thread>
    int main() { std::string s(\"x\"); std::thread t([] {}); t.join(); return (int)s.size(); }"
    SDDP_CAN_LINK_STATIC_CXX)
  unset(CMAKE_REQUIRED_FLAGS)
  unset(CMAKE_REQUIRED_LINK_OPTIONS)
  set(CMAKE_POSITION_INDEPENDENT_CODE ${_sddp_pic})
  if(SDDP_CAN_LINK_STATIC_CXX)
    set(SDDP_HAVE_STATIC_CXX_RUNTIME ON)
  endif()
endif()
if(SDDP_STATIC_CXX_RUNTIME STREQUAL "ON" AND NOT SDDP_HAVE_STATIC_CXX_RUNTIME)
  message(FATAL_ERROR "SDDP_STATIC_CXX_RUNTIME=ON, but libstdc++.a cannot be linked into a "
                      "shared object here (GCC only, no sanitizer; RHEL: dnf install "
                      "libstdc++-static); use AUTO or OFF")
endif()
message(STATUS "slurm-ddp: C++ runtime linked into the plugin: ${SDDP_HAVE_STATIC_CXX_RUNTIME}")

# sddp_static_cxx_runtime(TARGET): link TARGET's C++ runtime in, where SDDP_HAVE_STATIC_CXX_RUNTIME.
# SDDP_STATIC_CXX_RUNTIME=1 tells the code (it must then free that copy's own allocations).
function(sddp_static_cxx_runtime target)
  if(SDDP_HAVE_STATIC_CXX_RUNTIME)
    target_link_options(${target} PRIVATE -static-libstdc++ -static-libgcc)
    target_compile_definitions(${target} PRIVATE SDDP_STATIC_CXX_RUNTIME=1)
  endif()
endfunction()
