#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# libslurm_ddp against real NCCL releases (the pinned wheels of nccl_wheels.txt, fetched by
# scripts/nccl-wheels.sh): for each one the loader finds it and reads its version, the version
# gate refuses what is too old by name, every entry point we bind is there (the probe loads them
# all; ncclCommInitRankScalable from 2.23 on), the ncclConfig_t fields we set sit where that
# release reads them, and sddp_init (no GPU here) stops at GPU selection with our message.
# Skips (77) only when the wheel cache is absent and cannot be fetched (no network).
# Usage: nccl_versions_test.sh NCCL_PROBE SOURCE_DIR CC OUR_NCCL_INCLUDE OUR_CUDART_INCLUDE
set -euo pipefail
probe=$1 src=$2 cc=$3 our_nccl_inc=$4 our_cudart_inc=$5
fail() { echo "FAIL: $*" >&2; failed=1; }
failed=0

if ! dir=$(bash "$src/scripts/nccl-wheels.sh" --cached); then
    if ! dir=$(bash "$src/scripts/nccl-wheels.sh"); then
        echo "SKIPPED: the NCCL wheel cache is absent and could not be fetched (no network?);" \
            "run: bash scripts/nccl-wheels.sh"
        exit 77
    fi
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

layout() { # layout INCLUDE_DIR...: the config layout line as that nccl.h has it
    local args=() d
    for d in "$@"; do args+=(-I "$d"); done
    "$cc" "${args[@]}" -o "$work/layout" "$src/tests/api/nccl_config_layout.c" && "$work/layout"
}
ours=$(layout "$our_nccl_inc" "$our_cudart_inc" | head -1)
echo "this build: $ours"

cudart12=$(ls -d "$dir"/nvidia-cuda-runtime-cu12-*/lib | head -1)
cudart13=$(ls -d "$dir"/nvidia-cuda-runtime-1*/lib | head -1)
gpu=0
nvidia-smi -L >/dev/null 2>&1 && gpu=1
n=0
for d in "$dir"/nvidia-nccl-cu1[0-9]-*; do
    name=${d##*/} version=${name##*-}
    IFS=. read -r major minor patch <<<"$version"
    code=$((major * 10000 + minor * 100 + patch))
    case $name in *cu12*) rt=$cudart12 ;; *) rt=$cudart13 ;; esac
    lib="$d/lib/libnccl.so.2"
    [ -f "$lib" ] || { fail "$name: no libnccl.so.2 in the wheel"; continue; }
    n=$((n + 1))
    out=$(LD_LIBRARY_PATH="$d/lib:$rt" "$probe" init 2>&1) || true
    if ((code < 21800)); then
        grep -q "init=SDDP_ERR_UNSUPPORTED: .*NCCL $version at $lib is too old" <<<"$out" ||
            fail "$name: not refused by name: $out"
        echo "ok: $name refused by the version gate"
        continue
    fi
    grep -qx "have_nccl=1 version=$code" <<<"$out" || fail "$name: not loaded as $code: $out"
    if ((gpu == 0)); then
        grep -q 'init=SDDP_ERR_CUDA: .*GPU selection' <<<"$out" ||
            fail "$name: init did not stop at GPU selection: $out"
    fi
    if ((code >= 22300)); then
        # grep reads all of nm's output (with -q it would stop early and nm die of SIGPIPE).
        nm -D --defined-only "$lib" | grep -w ncclCommInitRankScalable >/dev/null ||
            fail "$name: no ncclCommInitRankScalable"
    fi
    if [ -f "$d/include/nccl.h" ]; then
        theirs=$(layout "$d/include" "$our_cudart_inc" | head -1)
        [ "$theirs" = "$ours" ] || fail "$name: ncclConfig_t differs: $theirs"
    fi
    echo "ok: $name (code $code) loads, binds every entry point, stops at GPU selection"
done
((n >= 6)) || fail "only $n NCCL wheels in $dir"
exit $failed
