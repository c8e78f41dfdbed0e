# SPDX-License-Identifier: Apache-2.0
# Reads SLURM_VERSION_NUMBER from the Slurm headers the plugin is built against. Slurm loads a
# SPANK plugin only under the release whose headers built it ("Incompatible plugin version"), so
# this version is part of the package's version and bounds its Slurm dependency.
#
# In:  SLURM_INCLUDE_DIR (the directory holding slurm/).
# Out: SDDP_SLURM_VERSION (e.g. 22.05.8), SDDP_SLURM_SERIES (22.05), SDDP_SLURM_NEXT_SERIES
#      (22.06: the first version outside the series, for "<<" bounds), SDDP_SLURM_VERSION_NUMBER.
set(SDDP_SLURM_VERSION "")
set(SDDP_SLURM_SERIES "")
set(SDDP_SLURM_NEXT_SERIES "")
set(SDDP_SLURM_VERSION_NUMBER "")
if(SLURM_INCLUDE_DIR)
  set(_sddp_version_line "")
  # slurm_version.h since 2.x; very old slurm.h carried the number itself.
  foreach(_header slurm/slurm_version.h slurm/slurm.h)
    if(EXISTS "${SLURM_INCLUDE_DIR}/${_header}")
      file(STRINGS "${SLURM_INCLUDE_DIR}/${_header}" _sddp_version_line
           REGEX "^#[ \t]*define[ \t]+SLURM_VERSION_NUMBER[ \t]+0x[0-9a-fA-F]+")
      if(_sddp_version_line)
        break()
      endif()
    endif()
  endforeach()
  if(NOT _sddp_version_line)
    message(FATAL_ERROR "slurm-ddp: no SLURM_VERSION_NUMBER in ${SLURM_INCLUDE_DIR}/slurm/"
                        "slurm_version.h or slurm.h: point -DSLURM_INCLUDE_DIR at the include "
                        "directory of a Slurm installation (the one holding slurm/spank.h)")
  endif()
  string(REGEX REPLACE ".*0x([0-9a-fA-F]+).*" "\\1" _sddp_hex "${_sddp_version_line}")
  math(EXPR SDDP_SLURM_VERSION_NUMBER "0x${_sddp_hex}" OUTPUT_FORMAT DECIMAL)
  math(EXPR _sddp_major "(${SDDP_SLURM_VERSION_NUMBER} >> 16) & 255")
  math(EXPR _sddp_minor "(${SDDP_SLURM_VERSION_NUMBER} >> 8) & 255")
  math(EXPR _sddp_micro "${SDDP_SLURM_VERSION_NUMBER} & 255")
  math(EXPR _sddp_next "${_sddp_minor} + 1")
  # Slurm spells its series with two-digit months: 22.05, 23.11.
  foreach(_v _sddp_minor _sddp_next)
    if(${_v} LESS 10)
      set(${_v} "0${${_v}}")
    endif()
  endforeach()
  set(SDDP_SLURM_SERIES "${_sddp_major}.${_sddp_minor}")
  set(SDDP_SLURM_NEXT_SERIES "${_sddp_major}.${_sddp_next}")
  set(SDDP_SLURM_VERSION "${SDDP_SLURM_SERIES}.${_sddp_micro}")
  message(STATUS "slurm-ddp: building for Slurm ${SDDP_SLURM_VERSION} "
                 "(SLURM_VERSION_NUMBER 0x${_sddp_hex} in ${SLURM_INCLUDE_DIR})")
endif()
