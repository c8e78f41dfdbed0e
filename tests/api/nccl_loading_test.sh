#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# libslurm_ddp loads NCCL and the CUDA runtime at run time: it links neither, carries no run
# path to CUDA, finds this machine's NCCL and reports its version (ncclGetVersion needs no GPU),
# and names an NCCL that is too old instead of failing with an undefined symbol.
# Usage: nccl_loading_test.sh LIBSLURM_DDP NCCL_PROBE FAKES_DIR HAVE_NCCL_LAYER(ON|OFF)
set -euo pipefail
lib=$1 probe=$2 fakes=$3 layer=$4
fail() { echo "FAIL: $*" >&2; exit 1; }

dyn=$(readelf -d "$lib")
if grep -Ei 'NEEDED.*(libnccl|libcudart|libcuda)' <<<"$dyn"; then
    fail "$lib links NCCL/CUDA (see NEEDED above): it would not load on CPU nodes"
fi
if grep -Ei '(RPATH|RUNPATH).*cuda' <<<"$dyn"; then fail "$lib has a run path to CUDA"; fi
echo "ok: no NEEDED entry or run path for NCCL/CUDA"

out=$(env -u LD_LIBRARY_PATH "$probe" init)
echo "$out"
if [[ $layer != ON ]]; then
    grep -q '^have_nccl=0 version=0$' <<<"$out" || fail "a build without the layer says NCCL"
    grep -q 'init=SDDP_ERR_UNSUPPORTED: .*without the NCCL layer' <<<"$out" \
        || fail "no clear message"
    echo "ok: this build has no NCCL layer and says so"
    exit 0
fi
if grep -q 'libnccl\.so\.2 ' <<<"$(ldconfig -p)"; then
    grep -Eq '^have_nccl=1 version=2[0-9]{4}$' <<<"$out" || fail "NCCL is installed but not found"
    v=$(sed -n 's/^have_nccl=1 version=//p' <<<"$out")
    ((v >= 21800)) || fail "version $v"
    # No GPU here: init gets as far as GPU selection (NCCL and the runtime loaded).
    if ! nvidia-smi -L >/dev/null 2>&1; then
        grep -q 'init=SDDP_ERR_CUDA: .*GPU selection' <<<"$out" \
            || fail "without a GPU, init should stop at GPU selection"
    fi
    echo "ok: found this machine's NCCL, version code $v"
else
    grep -q '^have_nccl=0' <<<"$out" || fail "no NCCL installed but have_nccl is not 0"
    grep -q 'init=SDDP_ERR_UNSUPPORTED: .*libnccl.so.2' <<<"$out" \
        || fail "the message does not name libnccl.so.2"
    echo "ok: no NCCL on this machine, and the message names libnccl.so.2"
fi

# RCCL when asked (SLURM_DDP_NCCL_LIBRARY), with the HIP runtime in place of the CUDA runtime:
# the fakes of both complete a world of one.
if [[ -e $fakes/amd/librccl.so.1 ]]; then
    amd=$(LD_LIBRARY_PATH=$fakes/amd SLURM_DDP_NCCL_LIBRARY=librccl.so.1 "$probe" init)
    echo "$amd"
    grep -q '^have_nccl=1 version=22809$' <<<"$amd" || fail "librccl.so.1 not loaded"
    grep -q '^init=SDDP_OK' <<<"$amd" || fail "init on RCCL and HIP failed"
    grep -q '^finalize=SDDP_OK' <<<"$amd" || fail "finalize on RCCL failed"
    missing=$(LD_LIBRARY_PATH=$fakes/amd SLURM_DDP_NCCL_LIBRARY=librccl.so.9 "$probe" init)
    grep -q 'init=SDDP_ERR_UNSUPPORTED: .*librccl.so.9' <<<"$missing" || fail "no message naming librccl.so.9"
    echo "ok: RCCL and the HIP runtime load when SLURM_DDP_NCCL_LIBRARY asks for them"
fi

# An older libnccl.so.2 first on LD_LIBRARY_PATH (as a PyTorch wheel's would be): named.
old=$(LD_LIBRARY_PATH=$fakes FAKE_NCCL_VERSION=21500 "$probe" init)
echo "$old"
grep -q '^have_nccl=0' <<<"$old" || fail "NCCL 2.15 accepted"
grep -q "init=SDDP_ERR_UNSUPPORTED: .*NCCL 2.15.0 at $fakes/libnccl.so.2 is too old" <<<"$old" \
    || fail "the old NCCL is not named"
echo "ok: an older libnccl.so.2 on LD_LIBRARY_PATH is refused by name"
