#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The plugin exports the SPANK hooks and Slurm's identification symbols, nothing else: every
# other symbol (the C++ core, inline libstdc++ code) stays private, so that two plugins, or a
# plugin and Slurm, never bind to each other's copies.
#   check_exports.sh PLUGIN.so [static-cxx]
# static-cxx: the build links the C++ runtime in (cmake/StaticCxxRuntime.cmake), so neither
# libstdc++ nor libgcc_s may be a dependency either.
set -euo pipefail
plugin=${1:?usage: check_exports.sh PLUGIN.so [static-cxx]}
static_cxx=${2:-}
command -v nm >/dev/null || { echo "SKIP: nm not found"; exit 77; }
allowed='^(slurm_spank_(init|init_post_opt|local_user_init|user_init|task_init_privileged|task_init|task_post_fork|task_exit|exit|job_prolog|job_epilog|slurmd_exit)|plugin_name|plugin_type|plugin_version|spank_plugin_version)$'
defined=$(nm -D --defined-only "$plugin" | awk 'NF >= 3 { print $3 }' | sed 's/@.*//')
echo "exported by $plugin:"; echo "$defined" | sed 's/^/  /'
bad=$(echo "$defined" | grep -Ev "$allowed" || true)
if [ -n "$bad" ]; then
    echo "FAIL: exports outside the SPANK interface:"; echo "$bad" | sed 's/^/  /'; exit 1
fi
for need in slurm_spank_init slurm_spank_task_init plugin_name plugin_type plugin_version spank_plugin_version; do
    echo "$defined" | grep -qx "$need" || { echo "FAIL: $need is not exported"; exit 1; }
done
# What it needs from its host must be Slurm's API (or libc/libstdc++, resolved by the loader);
# other libslurm calls are looked up at run time (spank_plugin/slurm_api.hpp).
undef_slurm=$(nm -D --undefined-only "$plugin" | awk '{ print $NF }' | sed 's/@.*//' |
              grep -E '^(spank_|slurm_)' || true)
bad=$(echo "$undef_slurm" | grep -Ev '^(spank_(context|get_item|getenv|setenv|unsetenv|option_register|option_getopt|strerror|job_control_(get|set|unset)env|prepend_task_argv|remote)|slurm_(error|info|verbose|debug|debug2|debug3|spank_log))$' | grep -v '^$' || true)
if [ -n "$bad" ]; then
    echo "FAIL: imports outside the SPANK API:"; echo "$bad" | sed 's/^/  /'; exit 1
fi
# Slurm loads the plugin into every srun, sbatch and slurmstepd: libhwloc (and the libudev it
# brings) is loaded on first use by a --ddp task, libcrypto never; neither may be a dependency.
if command -v readelf >/dev/null; then
    needed=$(readelf -d "$plugin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
    bad=$(echo "$needed" | grep -E '^lib(hwloc|udev|crypto|ssl)\.' || true)
    if [ -n "$bad" ]; then
        echo "FAIL: linked against libraries every srun would load:"; echo "$bad" | sed 's/^/  /'; exit 1
    fi
    if [ "$static_cxx" = static-cxx ]; then
        bad=$(echo "$needed" | grep -E '^lib(stdc\+\+|gcc_s|m)\.' || true)
        if [ -n "$bad" ]; then
            echo "FAIL: the C++ runtime was to be linked in, but these are dependencies:"
            echo "$bad" | sed 's/^/  /'; exit 1
        fi
    fi
    echo "dependencies:" $needed
fi
echo "OK: only SPANK symbols exported; imports:" $undef_slurm
