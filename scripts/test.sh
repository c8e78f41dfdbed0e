#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Every test of the project, as CI runs them (the README's test command). Run as root on a fresh
# Debian 12: it installs what it needs, builds, brings the local Slurm cluster up once for all
# integration tests, and runs the sanitizer builds and bounded fuzzing.
#
#   sudo bash scripts/test.sh            # everything
#   PHASES="unit integration" bash scripts/test.sh   # a subset: deps frameworks build unit integration production manynodes slurm-current valgrind asan tsan fuzz bench
#   SLURM_RELEASES="25.11.7" PHASES=slurm-current bash scripts/test.sh   # one Slurm release only
#   BUILD_DIR=build-x CMAKE_ARGS="-DSDDP_WITH_NCCL=OFF" PHASES="build unit" bash scripts/test.sh
#
# Each ctest phase prints how many tests ran, passed, skipped and failed, and fails if a test label
# it expects has no test (e.g. the plugin's tests when slurm/spank.h is missing) or if every test
# it ran skipped. The last line is "all phases passed: ..." (exit 0) or "FAILED phases: ..." (exit 1).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
PHASES=${PHASES:-"deps frameworks build unit integration production manynodes slurm-current valgrind asan tsan fuzz bench"}
JOBS=${JOBS:-$(nproc)}
BUILD_DIR=${BUILD_DIR:-build}  # the main build (build, unit, integration, valgrind phases)
CMAKE_ARGS=${CMAKE_ARGS:-}     # extra configure arguments for the main build
has() { [[ " $PHASES " == *" $1 "* ]]; }
t0=$SECONDS
phase() { echo; echo "=== $* (+$((SECONDS - t0))s)"; }
failed=()

if has deps; then
    phase "dependencies"
    bash tests/cluster/install-deps.sh
fi

# Building a Slurm release from source takes both cores for about 6 minutes. The slurm-current
# phase needs them only after the cluster tests, whose waits (Slurm's requeue delay, sbatch
# jobs, downloads before them) leave the cores idle for longer: so the builds start here, at the
# lowest priority, and that phase waits for them. A build that fails here is run again there,
# where its error is shown.
slurm_builds=
if has slurm-current; then
    mkdir -p .slurm-prefix
    (for release in ${SLURM_RELEASES:-26.05.3 25.11.7}; do
        nice -n 19 bash tests/cluster/build-slurm.sh "$release" >".slurm-prefix/build-$release.log" 2>&1 ||
            true
    done) &
    slurm_builds=$!
    trap 'kill "$slurm_builds" 2>/dev/null || true' EXIT
fi

if has frameworks; then
    phase "framework environments, NCCL wheels, container runtimes: pinned torch/Lightning/Accelerate/Transformers/DeepSpeed, JAX, TensorFlow; NCCL 2.17-2.32; enroot, pyxis and a PyTorch image (cached outside the clone)"
    # The real-stack tests (ctest -L stacks, in the integration phase) run from these. A first
    # build downloads ~3 GB from PyPI; later runs on the same machine reuse the cache.
    t_fw=$SECONDS
    if bash scripts/framework-env.sh all; then
        echo "framework environments ready in $((SECONDS - t_fw)) s"
    else
        failed+=(frameworks)
    fi
    # The NCCL/CUDA runtime wheels of the version matrix (ctest nccl_versions, in the unit phase).
    t_fw=$SECONDS
    if bash scripts/nccl-wheels.sh; then
        echo "NCCL wheels ready in $((SECONDS - t_fw)) s"
    else
        failed+=(nccl-wheels)
    fi
    # The container tests' runtimes and images (ctest -L containers, in the integration phase):
    # enroot and pyxis built from ../shared/containers (seconds), a Debian image with PyTorch
    # (about 3 minutes, 230 MB of packages), cached in /var/cache/slurm-ddp/containers.
    t_fw=$SECONDS
    if bash scripts/container-kit.sh enroot && bash scripts/container-kit.sh pyxis &&
        bash scripts/container-image.sh; then
        echo "container runtimes and images ready in $((SECONDS - t_fw)) s"
    else
        failed+=(containers)
    fi
fi

if has build; then
    phase "build (RelWithDebInfo)"
    # shellcheck disable=SC2086 # CMAKE_ARGS is a list of arguments
    cmake -S . -B "$BUILD_DIR" -DSDDP_BUILD_EXAMPLES=ON $CMAKE_ARGS >/dev/null
    cmake --build "$BUILD_DIR" -j"$JOBS"
fi

summary=()
reasons=()  # per failed phase: the failed tests and the lines that say why, repeated at the end
all_passed=0 all_failed=0 all_skipped=0
# run_ctest NAME BUILD_DIR "EXPECTED LABELS" CTEST_ARGS...
# A phase fails when a label it expects has no test registered in BUILD_DIR (e.g. the plugin's
# tests vanish when slurm/spank.h is missing), when its selection is empty, when a test fails,
# or when every test it ran skipped: a phase that tested nothing has not passed.
run_ctest() {
    local name=$1 dir=$2 labels=$3 label log n total passed skipped nfailed rc=0
    shift 3
    local problems=()
    for label in $labels; do
        n=$(ctest --test-dir "$dir" -N -L "^${label}\$" | sed -n 's/^Total Tests: *//p')
        if [ "${n:-0}" -eq 0 ]; then problems+=("no test labelled '$label' is registered in $dir"); fi
    done
    log=$(mktemp)
    ctest --test-dir "$dir" --output-on-failure --no-tests=error --timeout 300 "$@" 2>&1 |
        tee "$log" || rc=$?
    # One result line per test: "  3/42 Test  #3: name ....   Passed    0.01 sec".
    total=$(grep -cE '^ *[0-9]+/[0-9]+ Test +#[0-9]+:' "$log" || true)
    passed=$(grep -E '^ *[0-9]+/[0-9]+ Test +#[0-9]+:' "$log" | grep -cE ' Passed +[0-9.]+ sec' || true)
    skipped=$(grep -E '^ *[0-9]+/[0-9]+ Test +#[0-9]+:' "$log" | grep -cF '***Skipped' || true)
    nfailed=$((total - passed - skipped))
    all_passed=$((all_passed + passed)) all_failed=$((all_failed + nfailed)) all_skipped=$((all_skipped + skipped))
    # A long phase's output can scroll a failure's cause out of a truncated CI log: keep the names
    # and the verdict lines of sanitizers, libFuzzer and GoogleTest for the closing summary.
    if [ "$rc" -ne 0 ] || [ "$nfailed" -ne 0 ]; then
        local l
        reasons+=("$name:")
        # set +e: the subshell inherits set -e and pipefail, and a grep that finds nothing would
        # end it before the lines after it (the FAIL lines never reached a summary that way).
        while IFS= read -r l; do reasons+=("  $l"); done < <(
            set +e
            sed -n '/The following tests FAILED:/,/^Errors while running/p' "$log" | grep -E '^[[:space:]]+[0-9]+ - ' | sed 's/^[[:space:]]*//' | head -20
            grep -E 'SUMMARY: |property violated|ERROR: [A-Za-z]|: Failure$|^(Expected|Which is|Value of|  Actual): ' "$log" | head -20
            # The cluster tests' own verdicts: each FAIL line and the 3 lines of evidence after it.
            awk '/^FAIL: / { left = 4 } left > 0 { print substr($0, 1, 240); left-- }' "$log" | head -40
            # A test that failed with no FAIL line of its own (a crash, an unbound variable): the
            # last lines of its output.
            awk 'function flush(  i) {
                     if (cap && !said) for (i = (n > 8 ? n - 8 : 0); i < n; i++) print name ": " substr(out[i], 1, 220)
                     cap = 0 }
                 /^ *[0-9]+\/[0-9]+ Test +#[0-9]+: / {
                     flush(); name = $4; n = 0; said = 0; cap = ($0 ~ /\*\*\*(Failed|Exception)/); next }
                 /^ +Start +[0-9]+: / || /^[0-9]+% tests passed/ { flush(); next }
                 cap && NF { out[n++] = $0; if ($0 ~ /^FAIL: /) said = 1 }
                 END { flush() }' "$log" | head -40
            # A cluster that did not come up: cluster.sh's error and the daemon logs' last lines
            # before it (every test of the phase is then "Not Run", with no FAIL line).
            grep -E -B12 '^cluster\.sh: error: ' "$log" | cut -c1-240 | head -40)
    fi
    rm -f "$log"
    [ "$rc" -eq 0 ] || problems+=("ctest exited with status $rc")
    if [ "$total" -gt 0 ] && [ "$skipped" -eq "$total" ]; then problems+=("every test skipped: nothing was tested"); fi
    local line
    line=$(printf '%-12s ran %4d, passed %4d, skipped %4d, failed %4d' "$name" "$total" "$passed" "$skipped" "$nfailed")
    if [ ${#problems[@]} -ne 0 ]; then
        failed+=("$name")
        local sep="  FAILED: " p
        for p in "${problems[@]}"; do line+="$sep$p"; sep="; "; done
    fi
    summary+=("$line")
    echo "phase $line"
}

if has unit; then
    phase "unit, multi-process and packaging tests"
    run_ctest unit "$BUILD_DIR" "unit plugin multiproc api packaging" -LE 'integration|production|manynodes|fuzz|valgrind' -j"$JOBS"
fi

if has integration; then
    phase "integration tests on the local Slurm cluster (brought up once)"
    run_ctest integration "$BUILD_DIR" "integration stacks containers" -L integration
fi

if has production; then
    phase "the production profile: cgroup proctrack/task plugins, device confinement, job containers (its own cluster, brought up once)"
    run_ctest production "$BUILD_DIR" "production" -L production
fi

if has slurm-current; then
    phase "current Slurm releases: each built from ../shared/slurm (kept in .slurm-prefix/VERSION), plugin built against it, core integration tests on it"
    # Slurm loads a plugin only under the release that built it: the plugin and the cluster both
    # come from that Slurm (tests/integration/CMakeLists.txt runs the Slurm of SLURM_INCLUDE_DIR).
    # Each Slurm is built in the background from the start (above); later runs reuse the prefix.
    # SLURM_RELEASES picks the releases (default: the two newest series sites run); the core
    # subset runs on those in SLURM_SUBSET_RELEASES (default: all of them; the others only bring
    # their daemons up and down), and the production profile's subset on
    # SLURM_PRODUCTION_RELEASE (default 26.05.3).
    t_wait=$SECONDS
    [ -z "$slurm_builds" ] || wait "$slurm_builds" || true
    echo "the background Slurm builds finished $((SECONDS - t_wait)) s into this phase"
    for release in ${SLURM_RELEASES:-26.05.3 25.11.7}; do
        t_release=$SECONDS
        series=${release%.*}
        # 26.05 keeps its historical directory and phase name.
        if [[ $release == 26.05.3 ]]; then name=slurm-current; else name=slurm-$series; fi
        dir=build-$name
        if slurm_prefix=$(bash tests/cluster/build-slurm.sh "$release") &&
            cmake -S . -B "$dir" -DSLURM_INCLUDE_DIR="$slurm_prefix/include" \
                -DSDDP_BUILD_EXAMPLES=ON -DSDDP_WITH_NCCL=OFF | grep 'building for Slurm' &&
            cmake --build "$dir" -j"$JOBS" --target spank_ddp slurm-ddp c_minimal &&
            "$dir/tools/slurm-ddp" --version; then
            sed -n 's/^set(CPACK_PACKAGE_VERSION "\(.*\)")$/package version: \1/p' "$dir/CPackConfig.cmake"
            # pyxis_torch and pyxis_order: pyxis built against this release's headers, the
            # plugstack order check on its slurmstepd.
            subset='^(cluster_up|cluster_down|smoke_cluster|ddp_layouts|ddp_untouched|ddp_sbatch|gpu_binding|library_rendezvous|pyxis_torch|pyxis_order)$'
            [[ " ${SLURM_SUBSET_RELEASES:-$release} " == *" $release "* ]] || subset='^(cluster_up|cluster_down)$'
            run_ctest "$name" "$dir" "integration" -L integration -R "$subset"
            # The production profile on the newest release: namespace/tmpfs with contain_spank,
            # where Slurm runs the task_exit hook in a short-lived clone inside the job container.
            if [[ $release == "${SLURM_PRODUCTION_RELEASE:-26.05.3}" ]]; then
                run_ctest "$name-production" "$dir" "production" -L production \
                    -R '^(cluster_up_production|cluster_down_production|prod_layouts|prod_gpu_binding|prod_fail_fast|prod_requeue)$'
            fi
        else
            failed+=("$name")
        fi
        echo "$name phase (Slurm $release): $((SECONDS - t_release)) s"
    done
fi

if has manynodes; then
    phase "many nodes: a 32-node cluster of its own, up and down inside the test"
    run_ctest manynodes "$BUILD_DIR" "manynodes" -L manynodes
fi

if has valgrind; then
    phase "valgrind: the plugin's callbacks driven by a stand-in slurmstepd"
    run_ctest valgrind "$BUILD_DIR" "valgrind" -L valgrind
fi

if has asan; then
    phase "ASan+UBSan build: unit and multi-process tests"
    # NCCL off: its layer cannot run without a GPU, and CUDA's runtime is not built for ASan.
    cmake -S . -B build-asan -DSDDP_SANITIZE=address -DSDDP_BUILD_EXAMPLES=OFF -DSDDP_WITH_NCCL=OFF \
        -DCMAKE_BUILD_TYPE=Debug >/dev/null
    cmake --build build-asan -j"$JOBS"
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        run_ctest asan build-asan "unit plugin multiproc api" -LE 'integration|production|manynodes|fuzz|packaging|gpu|valgrind' -j"$JOBS"
fi

if has tsan; then
    phase "TSan builds: threaded and event-loop code (rendezvous, multi-process, NCCL layer on fakes)"
    # Only the threaded code's tests: the TCP event loop (multiproc), the API with its PMI2/PMIx worker thread.
    cmake -S . -B build-tsan -DSDDP_SANITIZE=thread -DSDDP_BUILD_EXAMPLES=OFF -DSDDP_WITH_NCCL=OFF \
        -DCMAKE_BUILD_TYPE=Debug >/dev/null
    cmake --build build-tsan -j"$JOBS" --target rdv_multiproc test_api_ranks sddp_fake_pmi2 sddp_fake_pmix step_watch_test \
        nccl_probe
    TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
        run_ctest tsan build-tsan "multiproc api" -L 'multiproc|api' -j"$JOBS"
    # The NCCL layer's own threads (the bounded finalize, the check's all-reduce) on the recording
    # fakes of libnccl/libcudart: a build of its own, so the API tests above keep no CUDA runtime.
    cmake -S . -B build-tsan-nccl -DSDDP_SANITIZE=thread -DSDDP_BUILD_EXAMPLES=OFF -DSDDP_WITH_NCCL=ON \
        -DCMAKE_BUILD_TYPE=Debug >/dev/null
    cmake --build build-tsan-nccl -j"$JOBS" --target nccl_layer_tests
    TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
        run_ctest tsan-nccl build-tsan-nccl "unit" \
        -R '^(CheckGpu|CudaGpu|NcclAgreement|NcclComms|NcclIds|NcclLoading|NcclSelfTest|NcclWait)\.' -j"$JOBS"
fi

if has fuzz; then
    phase "libFuzzer (clang), bounded time per target"
    CC=clang CXX=clang++ cmake -S . -B build-fuzz -DSDDP_BUILD_FUZZERS=ON -DSDDP_BUILD_EXAMPLES=OFF \
        -DSDDP_WITH_NCCL=OFF >/dev/null
    cmake --build build-fuzz -j"$JOBS"
    run_ctest fuzz build-fuzz "fuzz" -L fuzz
fi

if has bench; then
    phase "benchmarks, smoke run: bench/run.sh --smoke (N = 2, 8; one repetition; own build dir)"
    # Keeps the benchmarks building and running; the numbers of a smoke run mean nothing.
    # A Debug build: it compiles about 30% faster than RelWithDebInfo.
    if ! SDDP_BENCH_BUILD="$ROOT/build-bench-smoke" SDDP_BENCH_BUILD_TYPE=Debug \
        bash bench/run.sh --smoke; then
        failed+=(bench)
    fi
fi

phase "done"
if [ ${#summary[@]} -ne 0 ]; then printf '%s\n' "${summary[@]}"; fi
if [ ${#reasons[@]} -ne 0 ]; then
    echo "why (the failed tests and their verdict lines; the whole output is above):"
    printf '%s\n' "${reasons[@]}"
fi
if [ ${#failed[@]} -ne 0 ]; then
    echo "FAILED phases: ${failed[*]}"
    echo "tests: $all_passed passed, $all_failed failed, $all_skipped skipped"
    exit 1
fi
echo "all phases passed: $PHASES"
echo "tests: $all_passed passed, $all_failed failed, $all_skipped skipped"
