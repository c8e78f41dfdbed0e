#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `slurm-ddp check --nccl` in a task without a GPU names the NCCL and CUDA runtime it would use
# (the files, found where a PyTorch of the active Python environment gets them: the
# nvidia-nccl / nvidia-cuda-runtime wheels' folders under site-packages), says "no GPU", and
# never "built without NCCL" in a build with the layer. Without a library it names the files
# tried. One rank, no Slurm: the check runs as a job of one.
# Real releases come from the pinned wheel cache (scripts/nccl-wheels.sh, which ctest's
# nccl_versions fills); where it is absent, the cases on the fakes still run and the test
# reports SKIPPED (77).
# Usage: check_finds_nccl_test.sh SLURM_DDP SOURCE_DIR FAKES_DIR
set -uo pipefail
tool=$1 src=$2 fakes=$3
failed=0
fail() { echo "FAIL: $*" >&2; failed=1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# check [VAR=VALUE...]: the check's output in a clean environment of one rank without a GPU.
check() {
    env -i PATH=/usr/bin:/bin HOME="$work" "$@" "$tool" check --nccl --timeout=20 2>&1
}
expect() { # expect NAME OUTPUT TEXT...: every TEXT is in OUTPUT
    local name=$1 out=$2 t
    shift 2
    for t in "$@"; do
        grep -qF -- "$t" <<<"$out" || { fail "$name: no '$t' in:"$'\n'"$out"; return; }
    done
    grep -q "built without" <<<"$out" && { fail "$name: says 'built without' in:"$'\n'"$out"; return; }
    echo "ok: $name"
}

# The recording fakes on LD_LIBRARY_PATH: named by their files.
out=$(check LD_LIBRARY_PATH="$fakes")
expect "fakes on LD_LIBRARY_PATH" "$out" "nccl: skipped: no GPU visible to this task" \
    "from $fakes/libnccl.so.2" "the CUDA runtime $fakes/libcudart.so."

# A library that is nowhere: the files tried, and the way out.
out=$(check SLURM_DDP_NCCL_LIBRARY=libsddp-no-such-nccl.so.2)
expect "no NCCL" "$out" "nccl: skipped: NCCL is not available on this node: tried" \
    "libsddp-no-such-nccl.so.2 (" "SLURM_DDP_NCCL_LIBRARY"

if ! wheels=$(bash "$src/scripts/nccl-wheels.sh" --cached 2>/dev/null); then
    echo "SKIPPED: the NCCL wheel cache is absent: run bash scripts/nccl-wheels.sh"
    exit $((failed ? 1 : 77))
fi
# A virtual environment as pip lays the CUDA 12 wheels out (nvidia-nccl-cu12 and
# nvidia-cuda-runtime-cu12), active through VIRTUAL_ENV and through the python3 on PATH.
nccl=$(printf '%s\n' "$wheels"/nvidia-nccl-cu12-2.28.*/lib | tail -n 1)
cudart=$(printf '%s\n' "$wheels"/nvidia-cuda-runtime-cu12-*/lib | tail -n 1)
site=$work/venv/lib/python3.12/site-packages
mkdir -p "$site/nvidia/nccl/lib" "$site/nvidia/cuda_runtime/lib" "$work/venv/bin"
ln -s "$nccl/libnccl.so.2" "$site/nvidia/nccl/lib/libnccl.so.2"
ln -s "$cudart/libcudart.so.12" "$site/nvidia/cuda_runtime/lib/libcudart.so.12"
ln -s /bin/true "$work/venv/bin/python3"
version=${nccl%/lib}
version=${version##*-}
# The built CUDA major's runtime comes first where it exists (the system's here), so the wheel's
# libcudart.so.12 is only checked where it is the one found: the NCCL is the point.
out=$(check VIRTUAL_ENV="$work/venv")
expect "wheels of the venv in VIRTUAL_ENV" "$out" "no GPU visible to this task" \
    "NCCL $version from $site/nvidia/nccl/lib/libnccl.so.2"
out=$(env -i PATH="$work/venv/bin:/usr/bin:/bin" HOME="$work" "$tool" check --nccl --timeout=20 2>&1)
expect "wheels of the python3 on PATH" "$out" "no GPU visible to this task" \
    "NCCL $version from $site/nvidia/nccl/lib/libnccl.so.2"
exit $failed
