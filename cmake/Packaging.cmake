# SPDX-License-Identifier: Apache-2.0
# What `cmake --install` puts where, and the Debian packages `cpack -G DEB` builds from it, split
# the way admins install them:
#   slurm-ddp         the SPANK plugin, the slurm-ddp tool, man pages, the plugstack.conf snippet
#                     (/usr/share/slurm-ddp/ddp.conf, enabled by a symlink); tied to one Slurm
#                     series, since Slurm loads a plugin only under the release that built it
#   libslurm-ddp0     the runtime library (package name follows its SONAME)
#   libslurm-ddp-dev  headers, the .so link, CMake package and pkg-config file
#   *-dbgsym          the debug symbols the others are stripped of
# The RPM is built from packaging/rpm/slurm-ddp.spec instead.

# The Slurm series is part of the version: a plugin for 22.05 and one for 26.05 are different
# packages of the same source.
set(SDDP_PACKAGE_VERSION "${PROJECT_VERSION}")
if(SDDP_SLURM_SERIES)
  set(SDDP_PACKAGE_VERSION "${PROJECT_VERSION}+slurm${SDDP_SLURM_SERIES}")
endif()

install(FILES docs/spank_ddp.8 DESTINATION ${CMAKE_INSTALL_MANDIR}/man8)
install(FILES docs/slurm-ddp.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
# The C API's page goes where its header goes: the development package.
install(FILES docs/slurm_ddp.3 DESTINATION ${CMAKE_INSTALL_MANDIR}/man3 COMPONENT slurm_ddp_devel)
# Not under /usr/share/doc: minimal node images drop it, and the enabling symlink would dangle.
configure_file(packaging/ddp.conf.in ${PROJECT_BINARY_DIR}/ddp.conf @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/ddp.conf DESTINATION ${CMAKE_INSTALL_DATADIR}/slurm-ddp)

# The licence in every package, where Debian puts it (the RPM uses %license instead).
option(SDDP_INSTALL_COPYRIGHT "Install LICENSE as share/doc/<package>/copyright" ON)
set(_sddp_packages slurm_ddp_plugin slurm-ddp
                   slurm_ddp_runtime libslurm-ddp${SDDP_ABI_VERSION}
                   slurm_ddp_devel libslurm-ddp-dev)
if(SDDP_INSTALL_COPYRIGHT)
  foreach(_i 0 2 4)
    math(EXPR _j "${_i} + 1")
    list(GET _sddp_packages ${_i} _component)
    list(GET _sddp_packages ${_j} _package)
    install(FILES LICENSE DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/${_package} RENAME copyright
            COMPONENT ${_component})
  endforeach()
endif()

set(CPACK_PACKAGE_NAME slurm-ddp)
set(CPACK_PACKAGE_VERSION "${SDDP_PACKAGE_VERSION}")
set(CPACK_PACKAGE_VENDOR "slurm-ddp developers")
set(CPACK_PACKAGE_CONTACT "slurm-ddp developers <slurm-ddp@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "srun --ddp: SPANK plugin and bootstrap library for distributed data-parallel training")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_COMPONENTS_ALL slurm_ddp_plugin slurm_ddp_runtime slurm_ddp_devel)
set(CPACK_COMPONENT_SLURM_DDP_DEVEL_DEPENDS slurm_ddp_runtime)
# `slurm-ddp check` runs the library's own rendezvous: the tool links libslurm_ddp.
set(CPACK_COMPONENT_SLURM_DDP_PLUGIN_DEPENDS slurm_ddp_runtime)

set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# dpkg-shlibdeps resolves the tool's libslurm_ddp.so.0 from the build tree (its own package).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${CMAKE_BINARY_DIR}/libbootstrap/src/api)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
# Strips the binaries and puts their symbols into <package>-dbgsym_*.ddeb.
set(CPACK_DEBIAN_DEBUGINFO_PACKAGE ON)
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)

set(CPACK_DEBIAN_SLURM_DDP_PLUGIN_PACKAGE_NAME slurm-ddp)
set(CPACK_DEBIAN_SLURM_DDP_PLUGIN_PACKAGE_SECTION admin)
set(CPACK_COMPONENT_SLURM_DDP_PLUGIN_DESCRIPTION
    "srun --ddp: SPANK plugin that gives Slurm tasks the torchrun environment\n The plugin, the slurm-ddp tool and a plugstack.conf snippet (/usr/share/slurm-ddp/ddp.conf,\n enabled by a symlink in /etc/slurm/plugstack.conf.d/).")
# Debian names the package slurm-client, SchedMD's own Debian packaging slurm-smd-client. A range
# needs two relations; each accepts either name.
if(SDDP_SLURM_SERIES)
  set(_lo "(>= ${SDDP_SLURM_SERIES})")
  set(_hi "(<< ${SDDP_SLURM_NEXT_SERIES})")
  set(CPACK_DEBIAN_SLURM_DDP_PLUGIN_PACKAGE_DEPENDS
      "slurm-client ${_lo} | slurm-smd-client ${_lo}, slurm-client ${_hi} | slurm-smd-client ${_hi}")
else()
  set(CPACK_DEBIAN_SLURM_DDP_PLUGIN_PACKAGE_DEPENDS "slurm-client | slurm-smd-client")
endif()

set(CPACK_DEBIAN_SLURM_DDP_RUNTIME_PACKAGE_NAME libslurm-ddp${SDDP_ABI_VERSION})
set(CPACK_DEBIAN_SLURM_DDP_RUNTIME_PACKAGE_SECTION libs)
set(CPACK_COMPONENT_SLURM_DDP_RUNTIME_DESCRIPTION
    "slurm-ddp bootstrap library (runtime)\n libslurm_ddp: rank identity, rendezvous and NCCL communicators for programs started by\n srun --ddp.")
set(CPACK_DEBIAN_SLURM_DDP_DEVEL_PACKAGE_NAME libslurm-ddp-dev)
set(CPACK_DEBIAN_SLURM_DDP_DEVEL_PACKAGE_SECTION libdevel)
set(CPACK_COMPONENT_SLURM_DDP_DEVEL_DESCRIPTION
    "slurm-ddp bootstrap library (development files)\n Headers, CMake package (find_package(slurm_ddp)) and pkg-config file (slurm_ddp).")
include(CPack)
