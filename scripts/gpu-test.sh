#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The GPU suite in one command: builds with NCCL, brings up Slurm on this machine with the
# scripts in .gpu/ (a copy of ../shared/gpu, see its README), and runs every GPU scenario,
# printing one verdict line per item (PASS, FAIL, or NOT RUN with the reason) and a summary.
#
#   bash scripts/gpu-test.sh                 # from the checkout's root, as root
#   BUILD=build-gpu KEEP_SLURM=1 bash scripts/gpu-test.sh
#
# Without a GPU (nvidia-smi -L fails or lists none) it says so, checks that everything it would
# run was built, and exits 0. With one it exits 1 if any item failed. Scenarios that need more
# GPUs than the machine has (several ranks: NCCL refuses two ranks on one GPU) say NOT RUN.
# Slurm is brought down at the end unless KEEP_SLURM=1.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
ROOT=$(pwd)
BUILD=${BUILD:-$ROOT/build-gpu}
[[ $BUILD = /* ]] || BUILD=$ROOT/$BUILD
T=${SLURM_DDP_TEST_TIMEOUT_MS:-5000}  # the timeout of the kill scenarios
OUTDIR=${OUT:-$BUILD/gpu-test}
mkdir -p "$OUTDIR"
pass=0 fail=0 notrun=0
verdict() {  # verdict PASS|FAIL|NOT-RUN NAME [DETAIL]
    printf '%-8s %-44s %s\n' "$1" "$2" "${3:-}"
    case $1 in PASS) pass=$((pass + 1)) ;; FAIL) fail=$((fail + 1)) ;; *) notrun=$((notrun + 1)) ;; esac
}
# run NAME CMD...: runs CMD with its output in $OUTDIR/NAME.log; PASS on status 0.
run() {
    local name=$1 t0=$SECONDS
    shift
    if "$@" >"$OUTDIR/$name.log" 2>&1; then
        verdict PASS "$name" "($((SECONDS - t0)) s)"
    else
        verdict FAIL "$name" "(status $?, $((SECONDS - t0)) s; tail of $OUTDIR/$name.log:)"
        tail -n 8 "$OUTDIR/$name.log" | sed 's/^/         | /'
    fi
}

# ---- GPU present? ---------------------------------------------------------------------------
gpus=0
if command -v nvidia-smi >/dev/null && smi=$(nvidia-smi -L 2>&1); then
    gpus=$(grep -c '^GPU ' <<<"$smi")
fi
echo "gpu-test: $gpus GPU(s) here${smi:+:}"
[[ $gpus -gt 0 ]] && printf '  %s\n' "$smi"

# ---- Slurm headers first (the plugin builds against them) -------------------------------------
if [[ $gpus -gt 0 ]]; then
    if [[ ! -f .gpu/slurm-on-device.sh ]]; then
        if [[ -d ../shared/gpu ]]; then
            grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || echo /.gpu/ >>.git/info/exclude
            rm -rf .gpu && cp -r ../shared/gpu .gpu
        else
            echo "gpu-test: .gpu/slurm-on-device.sh is missing: copy ../shared/gpu to .gpu (see its README)"
            exit 1
        fi
    fi
    run slurm_up bash .gpu/slurm-on-device.sh up
    # shellcheck disable=SC1091
    source /opt/slurmdeb/env.sh
    extra=(-DSLURM_INCLUDE_DIR=/opt/slurmdeb/usr/include)
else
    extra=()
fi

# ---- where NCCL and the CUDA runtime are ---------------------------------------------------------
# A CUDA toolkit under SDDP_CUDA_ROOT, else the NVIDIA wheels PyTorch installed (nvidia/*/include
# and lib; the wheels ship libnccl.so.2 without the libnccl.so link find_library wants).
if [[ ! -f ${SDDP_CUDA_ROOT:-/usr/local/cuda}/include/nccl.h ]]; then
    nv=$(python3 -c 'import nvidia; print(list(nvidia.__path__)[0])' 2>/dev/null || true)
    if [[ -n $nv ]]; then
        h=$(find "$nv" -name nccl.h | head -n 1) r=$(find "$nv" -name cuda_runtime_api.h | head -n 1)
        l=$(find "$nv" -name libnccl.so.2 | head -n 1) c=$(find "$nv" -name 'libcudart.so.[0-9]*' | head -n 1)
        [[ -n $h && -n $r ]] && extra+=(-DNCCL_INCLUDE_DIR="$(dirname "$h")" -DCUDART_INCLUDE_DIR="$(dirname "$r")")
        [[ -n $l && -n $c ]] && extra+=(-DNCCL_LIBRARY="$l" -DCUDART_LIBRARY="$c")
        echo "gpu-test: NCCL and the CUDA runtime from PyTorch's wheels under $nv"
    fi
fi
# The tests directory needs GoogleTest; where it is missing, the few GPU programs are compiled
# by hand below instead.
have_gtest=${GPU_TEST_GTEST:-OFF}
if [[ -z ${GPU_TEST_GTEST:-} ]] && { [[ -f /usr/include/gtest/gtest.h ]] || [[ -n $(find /usr -name GTestConfig.cmake -print -quit 2>/dev/null) ]]; }; then
    have_gtest=ON
fi

# ---- build -------------------------------------------------------------------------------------
t0=$SECONDS
if cmake -S . -B "$BUILD" -DSDDP_WITH_NCCL=ON -DSDDP_BUILD_EXAMPLES=ON -DSDDP_BUILD_BENCH=ON \
    -DSDDP_BUILD_TESTS=$have_gtest "${extra[@]}" >"$OUTDIR/build.log" 2>&1 &&
    cmake --build "$BUILD" -j"$(nproc)" >>"$OUTDIR/build.log" 2>&1; then
    verdict PASS build "($((SECONDS - t0)) s)"
else
    verdict FAIL build "(see $OUTDIR/build.log)"
    tail -n 20 "$OUTDIR/build.log"
    exit 1
fi
bin() { find "$BUILD" -type f -name "$1" -perm -u+x | head -n 1; }
plugin=$(find "$BUILD" -name spank_ddp.so | head -n 1)
lib=$(find "$BUILD" -name 'libslurm_ddp.so.*.*' | head -n 1)
fakes=$BUILD/tests/api/fakes
if [[ $have_gtest = OFF && -n $lib ]]; then
    cache() { sed -n "s/^$1:[A-Z]*=//p" "$BUILD/CMakeCache.txt"; }
    gp=$BUILD/gpu-programs fakes=$BUILD/gpu-programs/fakes
    mkdir -p "$fakes"
    inc=(-Ilibbootstrap/include -I"$(cache NCCL_INCLUDE_DIR)" -I"$(cache CUDART_INCLUDE_DIR)")
    nccl_lib=$(cache NCCL_LIBRARY) cudart_lib=$(cache CUDART_LIBRARY)
    major=$(sed -n 's/^#define CUDART_VERSION *\([0-9]*\).*/\1/p' "$(cache CUDART_INCLUDE_DIR)/cuda_runtime_api.h")
    major=$((major / 1000))
    libdir=$(dirname "$lib") rp="-Wl,-rpath,$(dirname "$lib"):$(dirname "$nccl_lib"):$(dirname "$cudart_lib")"
    {
        g++ -std=c++20 -O2 "${inc[@]}" tests/api/test_gpu_allreduce.cpp -o "$gp/test_gpu_allreduce" \
            -L"$libdir" -lslurm_ddp "$nccl_lib" "$cudart_lib" "$rp" -pthread &&
            gcc -O2 -Ilibbootstrap/include tests/api/nccl_probe.c -o "$gp/nccl_probe" -L"$libdir" \
                -lslurm_ddp "-Wl,-rpath,$libdir" &&
            gcc -O2 -shared -fPIC "${inc[@]}" tests/api/fakes/fake_nccl.c -o "$fakes/libnccl.so.2" \
                -Wl,-soname,libnccl.so.2 -pthread &&
            gcc -O2 -shared -fPIC "${inc[@]}" tests/api/fakes/fake_cudart.c \
                -o "$fakes/libcudart.so.$major" -Wl,-soname,"libcudart.so.$major"
    } >>"$OUTDIR/build.log" 2>&1 || verdict FAIL "GPU programs (no GoogleTest: by hand)" "(see $OUTDIR/build.log)"
fi
gpu_test=$(bin test_gpu_allreduce) allreduce=$(bin cpp_allreduce) bench=$(bin nccl_init_bench)
probe=$(bin nccl_probe) c_minimal=$(bin c_minimal) tool=$(bin slurm-ddp)
layer_tests=$(bin nccl_layer_tests)
[[ $have_gtest = ON ]] || layer_tests=none  # by hand (no GoogleTest): not built
if [[ -n ${gp:-} ]]; then gpu_test=$gp/test_gpu_allreduce probe=$gp/nccl_probe; fi
[[ -f $fakes/libnccl.so.2 ]] || fakes=""
missing=()
for v in plugin lib gpu_test allreduce bench probe c_minimal fakes tool layer_tests; do
    [[ -n ${!v} ]] || missing+=("$v")
done
[[ -f examples/pytorch/train_ddp.py ]] || missing+=(train_ddp.py)
if ((${#missing[@]})); then
    verdict FAIL "everything built" "missing: ${missing[*]}"
    exit 1
fi
verdict PASS "everything built" "(plugin, library, test_gpu_allreduce, cpp_allreduce, nccl_init_bench, nccl_probe, c_minimal, fakes, slurm-ddp, nccl_layer_tests)"

# Loading needs no GPU: checked everywhere.
run nccl_loading tests/api/nccl_loading_test.sh "$lib" "$probe" "$fakes" ON

if [[ $gpus -eq 0 ]]; then
    echo "gpu-test: no GPU here (nvidia-smi -L: ${smi:-not installed}): nothing else to run;" \
        "everything it would run is built; $pass passed, $fail failed"
    ((fail == 0))
    exit
fi

# ---- on the GPU ---------------------------------------------------------------------------------
PLUGIN=$plugin bash .gpu/slurm-on-device.sh up >"$OUTDIR/slurm_plugin.log" 2>&1 ||
    verdict FAIL "register the plugin" "(see $OUTDIR/slurm_plugin.log)"
S="timeout 300 srun -n1"

# The four items the packaging issue names.
pytorch_nccl() {
    local out
    out=$($S --ddp --gres=gpu:1 python3 examples/pytorch/train_ddp.py --epochs 2 2>&1) || {
        echo "$out"
        return 1
    }
    echo "$out"
    grep -q 'backend nccl' <<<"$out"
}
init_bench() {  # where a GPU is visible, a SKIP is a failure
    local out
    out=$($S --ddp --gres=gpu:1 "$bench" --reps 5 2>&1) || {
        echo "$out"
        return 1
    }
    echo "$out"
    ! grep -q '^SKIP' <<<"$out"
}
run cpp_allreduce $S --ddp --gres=gpu:1 "$allreduce"
run pytorch_nccl pytorch_nccl
run test_gpu_allreduce $S --ddp --gres=gpu:1 "$gpu_test"
run nccl_init_bench init_bench

# Init + finalize 100 times in one process, with and without the node-local communicator.
run init_finalize_x100 $S --ddp --gres=gpu:1 "$gpu_test" --repeat 100
run init_finalize_x100_nolocal $S --ddp --gres=gpu:1 "$gpu_test" --repeat 100 --no-local

# Launch layouts (one rank each on this GPU).
run layout_plain_gpus_per_task $S --gpus-per-task=1 "$gpu_test"
run layout_plain_gres $S --gres=gpu:1 "$gpu_test"
uuid=$(nvidia-smi --query-gpu=uuid --format=csv,noheader | head -n 1)
run layout_uuid_list env CUDA_VISIBLE_DEVICES="$uuid" "$gpu_test"
run layout_empty_visible bash -c "CUDA_VISIBLE_DEVICES= '$gpu_test'; test \$? -eq 77"
if [[ $gpus -ge 2 ]]; then
    run "layout_gres_gpu_${gpus}" $S -n"$gpus" --gres=gpu:"$gpus" "$gpu_test"
    run "layout_ddp_${gpus}_ranks" $S -n"$gpus" --ddp --gres=gpu:"$gpus" "$gpu_test"
    run "layout_gpus_per_task_${gpus}_ranks" $S -n"$gpus" --gpus-per-task=1 "$gpu_test"
else
    verdict NOT-RUN "layout --gres=gpu:N, N ranks" "(one GPU here; NCCL refuses two ranks on one GPU)"
fi

# A rank killed before, during and after init: every other rank returns within the timeout
# plus a margin. Before: rank 1 never arrives (a world of two with only rank 0 started).
killed() {  # killed WHEN: runs the scenario, checks the survivors' lines and the time
    local when=$1 n=$2 t0=$SECONDS out
    if [[ $n -eq 1 ]]; then
        out=$(RANK=0 WORLD_SIZE=2 LOCAL_RANK=0 LOCAL_WORLD_SIZE=1 MASTER_ADDR=127.0.0.1 \
            MASTER_PORT=$((20000 + RANDOM % 20000)) SLURM_DDP_TIMEOUT=$T timeout 120 "$gpu_test" \
            --die 1:"$when" 2>&1)
    else
        out=$(SLURM_DDP_TIMEOUT=$T timeout 120 srun -n"$n" --ddp --gres=gpu:"$n" -K0 \
            "$gpu_test" --die 1:"$when" 2>&1)
    fi
    echo "$out"
    local took=$((SECONDS - t0)) want=$((n - 1))
    [[ $(grep -c '^SURVIVOR' <<<"$out") -eq $want ]] || { echo "expected $want survivors"; return 1; }
    ((took <= T / 1000 + 15)) || { echo "took $took s (timeout $((T / 1000)) s + 15 s margin)"; return 1; }
}
run killed_before_init killed before 1
if [[ $gpus -ge 2 ]]; then
    run killed_during_init killed during "$gpus"
    run killed_after_init killed after "$gpus"
else
    verdict NOT-RUN "killed during/after init" "(needs 2 GPUs: every rank must init NCCL)"
fi

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
run no_nccl_program $S --ddp "$c_minimal"

# slurm-ddp check on real GPUs: the one-element all-reduce, bus ids, device-cgroup isolation.
check_nccl() {  # check_nccl N: N ranks, one GPU each; every rank's all-reduce is right
    local n=$1 out
    out=$(timeout 120 srun -n"$n" --ddp --gres=gpu:"$n" "$tool" check --nccl --timeout=60 2>&1)
    local rc=$?
    echo "$out"
    ((rc == 0)) && [[ $(grep -c ': all-reduce ok, sum ' <<<"$out") -eq $n ]]
}
run check_nccl_1_rank check_nccl 1
# One GPU named by index in rank 0 and by UUID in rank 1: two names, one bus id, named.
check_bus_id() {
    local out
    out=$(timeout 120 srun -n2 --ddp=gpu-share --gres=gpu:1 bash -c \
        '[ "$SLURM_PROCID" = 1 ] && export CUDA_VISIBLE_DEVICES='"$uuid"'; exec '"$tool"' check' 2>&1)
    echo "$out"
    grep -q 'problem: ranks 0 and 1 on .*: both use GPU .*Duplicate GPU detected' <<<"$out"
}
run check_bus_id_index_and_uuid check_bus_id
if [[ $gpus -ge 2 ]]; then
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

# The NCCL layer's fault scenarios (agreement, bounded finalize, all-reduce) on the fakes, here
# with the real driver present: the fakes must still be the ones loaded.
if [[ $layer_tests != none ]]; then
    run nccl_layer_on_fakes env LD_LIBRARY_PATH="$fakes" "$layer_tests"
fi

[[ ${KEEP_SLURM:-0} = 1 ]] || bash .gpu/slurm-on-device.sh down >/dev/null 2>&1
echo "gpu-test: $pass passed, $fail failed, $notrun not run (logs in $OUTDIR)"
((fail == 0))
