#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# libslurm_ddp.so exports its C API and nothing else, and under SDDP_SELF_CONTAINED it
# neither needs nor binds to a C++ runtime or Nettle outside itself: a rank loads one object, and
# a process with a libstdc++ of its own (PyTorch) never shares C++ symbols with it.
# Usage: library_link_test.sh LIBSLURM_DDP STATIC_CXX_RUNTIME(ON|OFF) NETTLE_INSIDE(ON|OFF)
set -euo pipefail
lib=$1 static_cxx=$2 nettle_inside=$3
fail() { echo "FAIL: $*" >&2; exit 1; }
if ! command -v nm >/dev/null || ! command -v readelf >/dev/null; then
    echo "SKIP: nm or readelf missing"
    exit 77
fi

defined=$(nm -D --defined-only "$lib" | awk 'NF >= 3 { print $3 }' | sed 's/@.*//')
bad=$(grep -Ev '^(sddp_[a-z0-9_]+|SLURM_DDP_[0-9]+)$' <<<"$defined" || true)
[[ -z $bad ]] || fail "$lib exports more than the C API: $(tr '\n' ' ' <<<"$bad")"
grep -qx sddp_init <<<"$defined" || fail "$lib does not export sddp_init"
echo "ok: only sddp_* exported ($(wc -l <<<"$defined") symbols)"

needed=$(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
echo "needs: $needed"
if [[ $static_cxx == ON ]]; then
    grep -Eq 'libstdc\+\+|libgcc_s' <<<"$needed" && fail "$lib needs the shared C++ runtime"
    cxx=$(nm -D --undefined-only "$lib" | awk '{ print $NF }' | grep -E '^_Z|^__cxa_(throw|begin_catch|allocate)' || true)
    [[ -z $cxx ]] || fail "$lib binds C++ symbols from the process: $(tr '\n' ' ' <<<"$cxx" | head -c 300)"
    echo "ok: the C++ runtime is inside, no C++ symbol imported"
fi
if [[ $nettle_inside == ON ]]; then
    grep -q 'libnettle' <<<"$needed" && fail "$lib needs libnettle.so"
    nm -D --undefined-only "$lib" | grep -q 'nettle_' && fail "$lib imports Nettle symbols"
    echo "ok: Nettle's HMAC is inside"
fi
exit 0
