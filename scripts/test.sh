#!/bin/bash
# Every test of the project, as CI runs them (the README's test command). Run as root on a fresh
# Debian 12: it installs what it needs, builds, brings the local Slurm cluster up once for all
# integration tests, and runs the sanitizer builds and bounded fuzzing.
#
#   sudo bash scripts/test.sh            # everything
#   PHASES="unit integration" bash scripts/test.sh   # a subset: deps build unit integration manynodes valgrind asan tsan fuzz bench
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
PHASES=${PHASES:-"deps build unit integration manynodes valgrind asan tsan fuzz bench"}
JOBS=${JOBS:-$(nproc)}
has() { [[ " $PHASES " == *" $1 "* ]]; }
t0=$SECONDS
phase() { echo; echo "=== $* (+$((SECONDS - t0))s)"; }
failed=()

if has deps; then
    phase "dependencies"
    bash tests/cluster/install-deps.sh
fi

if has build; then
    phase "build (RelWithDebInfo)"
    cmake -S . -B build -DSDDP_BUILD_EXAMPLES=ON >/dev/null
    cmake --build build -j"$JOBS"
fi

run_ctest() {  # run_ctest NAME BUILD_DIR CTEST_ARGS...
    local name=$1 dir=$2; shift 2
    if ! ctest --test-dir "$dir" --output-on-failure --timeout 300 "$@"; then failed+=("$name"); fi
}

if has unit; then
    phase "unit, multi-process and packaging tests"
    run_ctest unit build -LE 'integration|manynodes|fuzz|valgrind' -j"$JOBS"
fi

if has integration; then
    phase "integration tests on the local Slurm cluster (brought up once)"
    run_ctest integration build -L integration
fi

if has manynodes; then
    phase "many nodes: a 32-node cluster of its own, up and down inside the test"
    run_ctest manynodes build -L manynodes
fi

if has valgrind; then
    phase "valgrind: the plugin's callbacks driven by a stand-in slurmstepd"
    run_ctest valgrind build -L valgrind
fi

if has asan; then
    phase "ASan+UBSan build: unit and multi-process tests"
    # NCCL off: its layer cannot run without a GPU, and CUDA's runtime is not built for ASan.
    cmake -S . -B build-asan -DSDDP_SANITIZE=address -DSDDP_BUILD_EXAMPLES=OFF -DSDDP_WITH_NCCL=OFF \
        -DCMAKE_BUILD_TYPE=Debug >/dev/null
    cmake --build build-asan -j"$JOBS"
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        run_ctest asan build-asan -LE 'integration|manynodes|fuzz|packaging|gpu|valgrind' -j"$JOBS"
fi

if has tsan; then
    phase "TSan build: threaded and event-loop code (rendezvous, multi-process)"
    # Only the threaded code's tests: the TCP event loop (multiproc), the API with its PMI2/PMIx worker thread.
    cmake -S . -B build-tsan -DSDDP_SANITIZE=thread -DSDDP_BUILD_EXAMPLES=OFF -DSDDP_WITH_NCCL=OFF \
        -DCMAKE_BUILD_TYPE=Debug >/dev/null
    cmake --build build-tsan -j"$JOBS" --target rdv_multiproc test_api_ranks sddp_fake_pmi2 sddp_fake_pmix
    TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
        run_ctest tsan build-tsan -L 'multiproc|api' -j"$JOBS"
fi

if has fuzz; then
    phase "libFuzzer (clang), bounded time per target"
    CC=clang CXX=clang++ cmake -S . -B build-fuzz -DSDDP_BUILD_FUZZERS=ON -DSDDP_BUILD_EXAMPLES=OFF \
        -DSDDP_WITH_NCCL=OFF >/dev/null
    cmake --build build-fuzz -j"$JOBS"
    run_ctest fuzz build-fuzz -L fuzz
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
if [ ${#failed[@]} -ne 0 ]; then
    echo "FAILED phases: ${failed[*]}"
    exit 1
fi
echo "all phases passed: $PHASES"
