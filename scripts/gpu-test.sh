#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The GPU suite, in steps that each fit one call of at most 10 minutes on a lent GPU machine:
#
#   bash scripts/gpu-test.sh build [--nccl=system|wheel]   # configure + build into build-gpu/
#   bash scripts/gpu-test.sh run [PART]                    # PART: all (default), load, single,
#                                                          #   repeat, layouts, faults, check, fakes
#   bash scripts/gpu-test.sh all [--nccl=...]              # build, then run every part
#
# `build` compiles against the CUDA toolkit's own headers (SDDP_CUDA_ROOT, default
# /usr/local/cuda; where that has none, the CUDA runtime wheel PyTorch uses, nvidia/cu13 or
# nvidia/cuda_runtime of python3, and last the copy in the ignored .devkit/ that
# scripts/gpu-kit.sh makes; see cuda_root below)
# /usr/local/cuda) and NCCL from the system (--nccl=system: nccl.h and libnccl under the
# toolkit or the system's folders) or from NVIDIA's PyPI wheel (--nccl=wheel: nvidia/nccl of the
# python3 on PATH, else of the cached torch environment of scripts/framework-env.sh, else of the
# wheel cache of scripts/nccl-wheels.sh); SDDP_GPU_NCCL=system|wheel says the same. Default:
# system where the toolkit has nccl.h, else wheel. It builds only what the suite runs, into
# BUILD (default build-gpu/, ignored by git), which the next `run` reuses. `run` needs that
# build; each scenario prints one verdict line (PASS, FAIL, or NOT-RUN with the reason) and the
# step a summary; logs go to $OUT when set (the device tool brings $OUT back), else
# BUILD/gpu-test/.
#
# Exit status: 0 every scenario passed; 1 one failed (or the build is missing); 77 (ctest's
# skip) from `run` where there is no GPU (nvidia-smi -L lists none), after the checks that need
# none (NCCL loading) passed. Scenarios that need more GPUs than the machine has say NOT-RUN.
#
# On a lent GPU machine (the `run` tool of this workplace; see ../shared/gpu/README.md): only
# the checkout travels, and the machine may lack a CUDA toolkit, nettle-dev and GoogleTest, so
# first gather the Slurm .debs and those headers into the ignored .devkit/ here
#
#   bash scripts/gpu-kit.sh
#
# then build and run in one call (a machine given back between calls loses the build), .devkit
# named in carry:
#
#   run(command="bash scripts/gpu-test.sh all", carry=[".devkit"], timeout_s=600)
#
# (`build` and `run [PART]` as separate calls work while the machine stays warm.)
# Slurm there is the one of .gpu/slurm-on-device.sh (one node, the machine's GPUs as gres),
# brought up by the first step that needs it and left up for the next (KEEP_SLURM=0: down at
# the end of `run`). It is never started where there is no GPU: a machine without one (a
# developer's, CI) runs `build` and the GPU-less checks of `run` only.
# shellcheck disable=SC2317 # the scenarios' helpers are defined inside their parts
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
ROOT=$(pwd)
STEP=${1:-}
shift || true
PART=all
NCCL_FROM=${SDDP_GPU_NCCL:-auto}
for arg in "$@"; do
    case $arg in
    --nccl=*) NCCL_FROM=${arg#--nccl=} ;;
    all | load | single | repeat | layouts | faults | check | fakes) PART=$arg ;;
    *)
        echo "gpu-test: unknown argument '$arg' (parts: all load single repeat layouts faults check fakes)" >&2
        exit 2
        ;;
    esac
done
case $NCCL_FROM in auto | system | wheel) ;; *)
    echo "gpu-test: --nccl / SDDP_GPU_NCCL is '$NCCL_FROM': use system or wheel" >&2
    exit 2
    ;;
esac
BUILD=${BUILD:-$ROOT/build-gpu}
[[ $BUILD = /* ]] || BUILD=$ROOT/$BUILD
CUDA_ROOT=${SDDP_CUDA_ROOT:-}
T=${SLURM_DDP_TEST_TIMEOUT:-5} # the rendezvous timeout of the kill scenarios, in seconds (as SLURM_DDP_TIMEOUT)
OUTDIR=${OUT:-$BUILD/gpu-test}
mkdir -p "$OUTDIR"
pass=0 fail=0 notrun=0
verdict() { # verdict PASS|FAIL|NOT-RUN NAME [DETAIL]
    printf '%-8s %-44s %s\n' "$1" "$2" "${3:-}"
    case $1 in PASS) pass=$((pass + 1)) ;; FAIL) fail=$((fail + 1)) ;; *) notrun=$((notrun + 1)) ;; esac
}
# run NAME CMD...: runs CMD with its output in $OUTDIR/NAME.log; PASS on status 0, NOT-RUN on
# 77 (the skip of ctest), FAIL otherwise.
run() {
    local name=$1 t0=$SECONDS rc
    shift
    "$@" >"$OUTDIR/$name.log" 2>&1
    rc=$?
    if ((rc == 0)); then
        verdict PASS "$name" "($((SECONDS - t0)) s)"
    elif ((rc == 77)); then
        verdict NOT-RUN "$name" "($(grep -m1 SKIP "$OUTDIR/$name.log"))"
    else
        verdict FAIL "$name" "(status $rc, $((SECONDS - t0)) s; tail of $OUTDIR/$name.log:)"
        tail -n 8 "$OUTDIR/$name.log" | sed 's/^/         | /'
    fi
}
summary() { # summary STEP: the last line, and the exit status
    echo "gpu-test $1: $pass passed, $fail failed, $notrun not run (logs in $OUTDIR)"
    ((fail == 0))
}

gpus=0 smi=""
if command -v nvidia-smi >/dev/null && smi=$(nvidia-smi -L 2>&1); then
    gpus=$(grep -c '^GPU ' <<<"$smi")
fi

# Slurm of .gpu/slurm-on-device.sh, on a GPU machine only (it runs as root and owns the node).
slurm_up() {
    if [[ ! -f .gpu/slurm-on-device.sh ]]; then
        if [[ -f .devkit/gpu/slurm-on-device.sh ]]; then
            rm -rf .gpu && cp -r .devkit/gpu .gpu
        elif [[ -d ../shared/gpu ]]; then
            grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || echo /.gpu/ >>.git/info/exclude
            rm -rf .gpu && cp -r ../shared/gpu .gpu
        else
            echo "gpu-test: .gpu/slurm-on-device.sh is missing: copy ../shared/gpu to .gpu here and name .gpu in the run tool's carry"
            return 1
        fi
    fi
    PLUGIN=${1:-} bash .gpu/slurm-on-device.sh up >"$OUTDIR/slurm_up.log" 2>&1 || {
        tail -n 20 "$OUTDIR/slurm_up.log"
        return 1
    }
    # shellcheck disable=SC1091
    source /opt/slurmdeb/env.sh
}

# python3's NVIDIA wheel folders nvidia/NAME, for each NAME given (none without such wheels).
python_nvidia_dirs() {
    python3 - "$@" 2>/dev/null <<'EOF'
import os, sys
import nvidia
print("\n".join(os.path.join(p, n) for p in nvidia.__path__ for n in sys.argv[1:]))
EOF
}

# The folder of an NVIDIA NCCL wheel (include/nccl.h, lib/libnccl.so.2), for CUDA major $1.
wheel_nccl() {
    local d
    for d in $(python_nvidia_dirs nccl) /var/cache/slurm-ddp/frameworks/torch-*/lib/python3*/site-packages/nvidia/nccl; do
        [[ -f $d/include/nccl.h && -f $d/lib/libnccl.so.2 ]] && echo "$d" && return 0
    done
    if d=$(bash scripts/nccl-wheels.sh --cached 2>/dev/null); then
        d=$(printf '%s\n' "$d"/nvidia-nccl-cu"$1"-* | sort -V | tail -n 1)
        [[ -n $d && -f $d/include/nccl.h ]] && echo "$d" && return 0
    fi
    return 1
}

# The CUDA runtime to build against, into CUDA_ROOT: SDDP_CUDA_ROOT when set; else the system's
# toolkit; else the runtime wheel of python3 (a GPU machine with PyTorch from PyPI and no
# toolkit: its runtime is the one the driver there is known to take); else .devkit/cuda.
cuda_root() {
    local d
    if [[ -n $CUDA_ROOT ]]; then
        [[ -f $CUDA_ROOT/include/cuda_runtime_api.h ]]
        return
    fi
    for d in /usr/local/cuda \
        $(python_nvidia_dirs cu13 cuda_runtime) \
        "$ROOT/.devkit/cuda"; do
        [[ -f $d/include/cuda_runtime_api.h ]] && CUDA_ROOT=$d && return 0
    done
    return 1
}

# ---- build --------------------------------------------------------------------------------------
step_build() {
    local extra=() t0=$SECONDS
    cuda_root || {
        echo "gpu-test: no CUDA runtime headers (include/cuda_runtime_api.h) in ${SDDP_CUDA_ROOT:-/usr/local/cuda}, in python3's nvidia/cu13 or nvidia/cuda_runtime wheel, or in .devkit/cuda (scripts/gpu-kit.sh): set SDDP_CUDA_ROOT to a CUDA toolkit"
        return 1
    }
    local major
    major=$(sed -n 's/^#define CUDART_VERSION *\([0-9]*\).*/\1/p' "$CUDA_ROOT/include/cuda_runtime_api.h")
    major=$((major / 1000))
    extra+=(-DSDDP_CUDA_ROOT="$CUDA_ROOT" -DCUDART_INCLUDE_DIR="$CUDA_ROOT/include")
    # A wheel ships only libcudart.so.N, which find_library does not take for "cudart".
    local cudart="" f
    for f in "$CUDA_ROOT"/lib64/libcudart.so "$CUDA_ROOT"/lib/libcudart.so "$CUDA_ROOT"/lib*/libcudart.so."$major"; do
        [[ -f $f ]] && cudart=$f && break
    done
    [[ -n $cudart ]] && extra+=(-DCUDART_LIBRARY="$cudart")
    [[ $NCCL_FROM = auto ]] && { [[ -f $CUDA_ROOT/include/nccl.h ]] && NCCL_FROM=system || NCCL_FROM=wheel; }
    local nccl_desc
    if [[ $NCCL_FROM = wheel ]]; then
        local w
        w=$(wheel_nccl "$major") || {
            echo "gpu-test: --nccl=wheel: no nvidia/nccl wheel (include/nccl.h, lib/libnccl.so.2) in python3's site-packages, the torch environment or the wheel cache (bash scripts/nccl-wheels.sh)"
            return 1
        }
        extra+=(-DNCCL_INCLUDE_DIR="$w/include" -DNCCL_LIBRARY="$w/lib/libnccl.so.2")
        nccl_desc="wheel $w"
    else
        nccl_desc="system (nccl.h and libnccl under $CUDA_ROOT or the system's folders)"
    fi
    echo "gpu-test: CUDA headers $CUDA_ROOT/include (CUDA $major, runtime ${cudart:-not found}); NCCL from the $nccl_desc"
    # The plugin needs spank.h: the system's, else that of the Slurm .debs on a GPU machine.
    if [[ ! -f /usr/include/slurm/spank.h ]]; then
        if ((gpus > 0)) && slurm_up; then
            extra+=(-DSLURM_INCLUDE_DIR=/opt/slurmdeb/usr/include)
        else
            echo "gpu-test: no slurm/spank.h here: the plugin is not built"
        fi
    fi
    # Nettle and GoogleTest where the machine has no -dev package: .devkit/ (scripts/gpu-kit.sh).
    local prefixes=()
    if ! pkg-config --exists nettle 2>/dev/null && [[ ! -f /usr/include/nettle/hmac.h && -d .devkit/nettle ]]; then
        prefixes+=("$ROOT/.devkit/nettle")
        echo "gpu-test: Nettle from .devkit/nettle (no nettle-dev here)"
    fi
    command -v ccache >/dev/null &&
        extra+=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
    local gtest=OFF
    if [[ -f /usr/include/gtest/gtest.h ]] || [[ -n $(find /usr -name GTestConfig.cmake -print -quit 2>/dev/null) ]]; then
        gtest=ON
    elif [[ -d .devkit/gtest ]]; then
        gtest=ON
        prefixes+=("$ROOT/.devkit/gtest")
        echo "gpu-test: GoogleTest from .devkit/gtest (none here)"
    fi
    if ((${#prefixes[@]})); then
        local IFS=';'
        extra+=(-DCMAKE_PREFIX_PATH="${prefixes[*]}")
        unset IFS
    fi
    local targets=(slurm_ddp slurm-ddp cpp_allreduce c_minimal nccl_init_bench)
    [[ -f /usr/include/slurm/spank.h || -f /opt/slurmdeb/usr/include/slurm/spank.h ]] && targets+=(spank_ddp)
    [[ $gtest = ON ]] && targets+=(nccl_probe test_gpu_allreduce nccl_layer_tests sddp_fake_nccl sddp_fake_cudart
        sddp_fake_cudart_prev sddp_fake_rccl sddp_fake_hip)
    local jobs=${GPU_TEST_JOBS:-$(nproc)}
    if cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSDDP_WITH_NCCL=ON \
        -DSDDP_BUILD_EXAMPLES=ON -DSDDP_BUILD_BENCH=ON -DSDDP_BUILD_TESTS=$gtest \
        -DSDDP_INTEGRATION=OFF "${extra[@]}" >"$OUTDIR/build.log" 2>&1 &&
        cmake --build "$BUILD" -j"$jobs" --target "${targets[@]}" >>"$OUTDIR/build.log" 2>&1; then
        verdict PASS build "($((SECONDS - t0)) s, -j$jobs)"
    else
        verdict FAIL build "(see $OUTDIR/build.log)"
        tail -n 20 "$OUTDIR/build.log"
        return 1
    fi
    [[ $gtest = ON ]] || build_by_hand "$major"
    printf 'NCCL_FROM=%q\nGTEST=%q\n' "$nccl_desc" "$gtest" >"$BUILD/gpu-test.env"
    find_programs && verdict PASS "everything built" "(${#wanted[@]} programs and libraries)"
}

# Without GoogleTest the few GPU programs of tests/api are compiled by hand.
build_by_hand() {
    local lib gp=$BUILD/gpu-programs
    cache() { sed -n "s/^$1:[A-Z]*=//p" "$BUILD/CMakeCache.txt"; }
    lib=$(find "$BUILD" -name 'libslurm_ddp.so.*.*' | head -n 1)
    mkdir -p "$gp/fakes"
    local inc=(-Ilibbootstrap/include -I"$(cache NCCL_INCLUDE_DIR)" -I"$(cache CUDART_INCLUDE_DIR)")
    local nccl_lib cudart_lib libdir rp
    nccl_lib=$(cache NCCL_LIBRARY) cudart_lib=$(cache CUDART_LIBRARY) libdir=$(dirname "$lib")
    rp="-Wl,-rpath,$libdir:$(dirname "$nccl_lib"):$(dirname "$cudart_lib")"
    {
        g++ -std=c++20 -O2 "${inc[@]}" tests/api/test_gpu_allreduce.cpp -o "$gp/test_gpu_allreduce" \
            -L"$libdir" -lslurm_ddp "$nccl_lib" "$cudart_lib" "$rp" -pthread &&
            gcc -O2 "${inc[@]}" tests/api/nccl_probe.c -o "$gp/nccl_probe" -L"$libdir" -lslurm_ddp \
            -Wl,-rpath,"$libdir" &&
            gcc -O2 -shared -fPIC "${inc[@]}" tests/api/fakes/fake_nccl.c -o "$gp/fakes/libnccl.so.2" \
                -Wl,-soname,libnccl.so.2 -pthread &&
            gcc -O2 -shared -fPIC "${inc[@]}" tests/api/fakes/fake_cudart.c \
                -o "$gp/fakes/libcudart.so.$1" -Wl,-soname,"libcudart.so.$1"
    } >>"$OUTDIR/build.log" 2>&1 || verdict FAIL "GPU programs (no GoogleTest: by hand)" "(see $OUTDIR/build.log)"
}

# The programs the scenarios run, into variables; FAIL naming what is missing.
find_programs() {
    bin() { find "$BUILD" -type f -name "$1" -perm -u+x 2>/dev/null | head -n 1; }
    plugin=$(find "$BUILD" -name spank_ddp.so 2>/dev/null | head -n 1)
    lib=$(find "$BUILD" -name 'libslurm_ddp.so.*.*' 2>/dev/null | head -n 1)
    gpu_test=$(bin test_gpu_allreduce) allreduce=$(bin cpp_allreduce) bench=$(bin nccl_init_bench)
    probe=$(bin nccl_probe) c_minimal=$(bin c_minimal) tool=$(bin slurm-ddp)
    layer_tests=$(bin nccl_layer_tests) fakes=$BUILD/tests/api/fakes
    if [[ -d $BUILD/gpu-programs ]]; then
        gpu_test=$BUILD/gpu-programs/test_gpu_allreduce fakes=$BUILD/gpu-programs/fakes layer_tests=none
        probe=$BUILD/gpu-programs/nccl_probe
    fi
    [[ -f $fakes/libnccl.so.2 ]] || fakes=""
    wanted=(lib gpu_test allreduce bench probe c_minimal fakes tool layer_tests)
    [[ -f /usr/include/slurm/spank.h || -f /opt/slurmdeb/usr/include/slurm/spank.h ]] && wanted+=(plugin)
    local missing=() v
    for v in "${wanted[@]}"; do [[ -n ${!v} ]] || missing+=("$v"); done
    if ((${#missing[@]})); then
        verdict FAIL "everything built" "missing in $BUILD: ${missing[*]} (run: bash scripts/gpu-test.sh build)"
        return 1
    fi
}

# ---- run ----------------------------------------------------------------------------------------
S=(timeout 180 srun -n1)
want() { [[ $PART = all || $PART = "$1" ]]; }

part_single() {
    pytorch_nccl() {
        local out
        out=$("${S[@]}" --ddp --gres=gpu:1 python3 examples/pytorch/train_ddp.py --epochs 2 2>&1)
        local rc=$?
        echo "$out"
        ((rc == 0)) && grep -q 'backend nccl' <<<"$out"
    }
    init_bench() { # where a GPU is visible, a SKIP is a failure
        local out
        out=$("${S[@]}" --ddp --gres=gpu:1 "$bench" --reps 5 2>&1)
        local rc=$?
        echo "$out"
        ((rc == 0)) && ! grep -q '^SKIP' <<<"$out"
    }
    syncbn() { # a seed-style SyncBatchNorm trainer (needs CUDA), unchanged under srun --ddp
        local out
        out=$("${S[@]}" --ddp --gres=gpu:1 python3 examples/pytorch/train_syncbn.py 2>&1)
        local rc=$?
        echo "$out"
        ((rc == 0)) && grep -q '^syncbn ok world=1' <<<"$out"
    }
    run cpp_allreduce "${S[@]}" --ddp --gres=gpu:1 "$allreduce"
    run pytorch_nccl pytorch_nccl
    run syncbn syncbn
    run test_gpu_allreduce "${S[@]}" --ddp --gres=gpu:1 "$gpu_test"
    run nccl_init_bench init_bench
    # The NCCL a process already loaded is the one used (PyTorch's wheel here).
    run shares_pytorch_nccl python3 - "$lib" <<'EOF'
import ctypes, sys
import torch
torch_v = torch.cuda.nccl.version()
torch.zeros(1, device="cuda")  # loads torch's libnccl.so.2 if it is loaded lazily
lib = ctypes.CDLL(sys.argv[1])
v = lib.sddp_nccl_version()
want = torch_v[0] * 10000 + torch_v[1] * 100 + torch_v[2] if isinstance(torch_v, tuple) else torch_v
print(f"torch NCCL {torch_v}, libslurm_ddp sees {v}")
sys.exit(0 if v == want else 1)
EOF
    # A no_nccl program does not touch NCCL or CUDA (the library links neither).
    run no_nccl_program "${S[@]}" --ddp "$c_minimal"
}

part_repeat() { # init + finalize 100 times in one process, with and without the local communicator
    run init_finalize_x100 "${S[@]}" --ddp --gres=gpu:1 "$gpu_test" --repeat 100
    run init_finalize_x100_nolocal "${S[@]}" --ddp --gres=gpu:1 "$gpu_test" --repeat 100 --no-local
}

part_layouts() { # one rank each on this GPU, then N ranks where there are N GPUs
    run layout_plain_gpus_per_task "${S[@]}" --gpus-per-task=1 "$gpu_test"
    run layout_plain_gres "${S[@]}" --gres=gpu:1 "$gpu_test"
    local uuid
    uuid=$(nvidia-smi --query-gpu=uuid --format=csv,noheader | head -n 1)
    run layout_uuid_list env CUDA_VISIBLE_DEVICES="$uuid" "$gpu_test"
    run layout_empty_visible bash -c "CUDA_VISIBLE_DEVICES= '$gpu_test'; test \$? -eq 77"
    if ((gpus >= 2)); then
        run "layout_gres_gpu_${gpus}" "${S[@]}" -n"$gpus" --gres=gpu:"$gpus" "$gpu_test"
        run "layout_ddp_${gpus}_ranks" "${S[@]}" -n"$gpus" --ddp --gres=gpu:"$gpus" "$gpu_test"
        run "layout_gpus_per_task_${gpus}_ranks" "${S[@]}" -n"$gpus" --gpus-per-task=1 "$gpu_test"
    else
        verdict NOT-RUN "layout --gres=gpu:N, N ranks" "(one GPU here; NCCL refuses two ranks on one GPU)"
    fi
}

# A rank killed before, during and after init: every other rank returns within the timeout plus
# a margin. Before: rank 1 never arrives (a world of two with only rank 0 started).
part_faults() {
    killed() { # killed WHEN N: runs the scenario, checks the survivors' lines and the time
        local when=$1 n=$2 t0=$SECONDS out
        if [[ $n -eq 1 ]]; then
            # Outside srun: the per-step secret srun --ddp would have made, by hand.
            out=$(RANK=0 WORLD_SIZE=2 LOCAL_RANK=0 LOCAL_WORLD_SIZE=1 MASTER_ADDR=127.0.0.1 \
                MASTER_PORT=$((20000 + RANDOM % 20000)) SLURM_DDP_TIMEOUT=$T \
                SLURM_DDP_SECRET=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n') timeout 120 "$gpu_test" \
                --die 1:"$when" 2>&1)
        else
            out=$(timeout 120 srun -n"$n" --ddp=timeout="$T",keep-going --gres=gpu:"$n" -K0 \
                "$gpu_test" --die 1:"$when" 2>&1)
        fi
        echo "$out"
        # Every started rank but the victim survives; with n = 1 the victim never started.
        local took=$((SECONDS - t0)) want=$((n == 1 ? 1 : n - 1))
        [[ $(grep -c '^SURVIVOR' <<<"$out") -eq $want ]] || { echo "expected $want survivors"; return 1; }
        ((took <= T + 15)) || { echo "took $took s (timeout $T s + 15 s margin)"; return 1; }
    }
    run killed_before_init killed before 1
    if ((gpus >= 2)); then
        run killed_during_init killed during "$gpus"
        run killed_after_init killed after "$gpus"
    else
        verdict NOT-RUN "killed during/after init" "(needs 2 GPUs: every rank must init NCCL)"
    fi
}

# slurm-ddp check on real GPUs: the one-element all-reduce naming the NCCL it used, bus ids,
# device-cgroup isolation.
part_check() {
    check_nccl() { # check_nccl N: N ranks, one GPU each; every rank's all-reduce is right
        local n=$1 out
        out=$(timeout 120 srun -n"$n" --ddp --gres=gpu:"$n" "$tool" check --nccl --timeout=60 2>&1)
        local rc=$?
        echo "$out"
        ((rc == 0)) && [[ $(grep -c ': all-reduce ok, sum ' <<<"$out") -eq $n ]] &&
            grep -q '^nccl: using NCCL .* from /.*libnccl.so' <<<"$out"
    }
    run check_nccl_1_rank check_nccl 1
    # One GPU named by index in rank 0 and by UUID in rank 1: two names, one bus id, named.
    check_bus_id() {
        local out uuid
        uuid=$(nvidia-smi --query-gpu=uuid --format=csv,noheader | head -n 1)
        # shellcheck disable=SC2016 # $SLURM_PROCID is the task's
        out=$(timeout 120 srun -n2 --ddp=gpu-share --gres=gpu:1 bash -c \
            '[ "$SLURM_PROCID" = 1 ] && export CUDA_VISIBLE_DEVICES='"$uuid"'; exec '"$tool"' check' 2>&1)
        echo "$out"
        grep -q 'problem: ranks 0 and 1 on .*: both use GPU .*Duplicate GPU detected' <<<"$out"
    }
    run check_bus_id_index_and_uuid check_bus_id
    if ((gpus >= 2)); then
        run "check_nccl_${gpus}_ranks" check_nccl "$gpus"
        # --gpus-per-task=1: with ConstrainDevices=yes each task opens only its own GPU, and the
        # check must warn (naming --gres-flags=allow-task-sharing); with allow-task-sharing, not.
        check_isolation() {
            local out constrained
            constrained=$(scontrol show config 2>/dev/null | grep -ci 'ConstrainDevices *= *yes' || true)
            out=$(timeout 120 srun -n2 --gpus-per-task=1 "$tool" check 2>&1)
            echo "$out"
            if [[ $constrained -gt 0 ]]; then
                grep -q 'warning: node .*--gres-flags=allow-task-sharing' <<<"$out" || return 1
                out=$(timeout 120 srun -n2 --gpus-per-task=1 --gres-flags=allow-task-sharing "$tool" check 2>&1)
                echo "$out"
                ! grep -q 'warning: node' <<<"$out"
            else
                echo "(ConstrainDevices is off here: no isolation to see, and no warning expected)"
                ! grep -q 'warning: node' <<<"$out"
            fi
        }
        run check_cgroup_isolation check_isolation
    else
        verdict NOT-RUN "check --nccl on N ranks, cgroup isolation" "(needs 2 GPUs)"
    fi
}

step_run() {
    if [[ ! -f $BUILD/gpu-test.env ]]; then
        echo "gpu-test: no build in $BUILD: run 'bash scripts/gpu-test.sh build' first (in an earlier call on the same machine)"
        return 1
    fi
    # shellcheck disable=SC1091
    source "$BUILD/gpu-test.env"
    find_programs || return 1
    echo "gpu-test: $gpus GPU(s) here; the build's NCCL: from the $NCCL_FROM"
    ((gpus > 0)) && printf '  %s\n' "$smi"
    # Loading needs no GPU: checked everywhere.
    if want load; then
        run nccl_loading tests/api/nccl_loading_test.sh "$lib" "$probe" "$fakes" ON
        run check_names_its_nccl tests/api/check_finds_nccl_test.sh "$tool" "$ROOT" "$fakes"
    fi
    if ((gpus == 0)); then
        echo "gpu-test run: SKIPPED: no GPU here (nvidia-smi -L: ${smi:-not installed}); the checks that need none: $pass passed, $fail failed"
        ((fail == 0)) && return 77
        return 1
    fi
    slurm_up "$plugin" || {
        verdict FAIL "Slurm up with the plugin" "(see $OUTDIR/slurm_up.log)"
        return 1
    }
    # The longest part (two hundred communicators) last, where a call's time limit cuts least.
    want single && part_single
    want check && part_check
    want layouts && part_layouts
    want faults && part_faults
    # The NCCL layer's fault scenarios on the fakes, here with the real driver present: the
    # fakes must still be the ones loaded.
    if want fakes && [[ $layer_tests != none ]]; then
        run nccl_layer_on_fakes env LD_LIBRARY_PATH="$fakes:$fakes/prev" "$layer_tests"
    fi
    want repeat && part_repeat
    [[ ${KEEP_SLURM:-1} = 1 ]] || bash .gpu/slurm-on-device.sh down >/dev/null 2>&1
    summary "run $PART"
}

case $STEP in
build)
    step_build && summary build
    rc=$?
    ;;
run)
    step_run
    rc=$?
    ;;
all)
    step_build && summary build && { pass=0 fail=0 notrun=0; step_run; }
    rc=$?
    ;;
*)
    sed -n '3,9p' "$0"
    echo "gpu-test: say build, run or all" >&2
    rc=2
    ;;
esac
exit $rc
