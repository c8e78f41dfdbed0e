#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Builds (once) and prints the path of a cached virtual environment with a pinned framework stack,
# for the cluster tests of real trainers (tests/frameworks/) and the end-to-end benchmark.
#
#   bash scripts/framework-env.sh torch    # torch, Lightning, Accelerate, Transformers, DeepSpeed, ...
#   bash scripts/framework-env.sh jax      # JAX on CPU
#   bash scripts/framework-env.sh tf       # TensorFlow on CPU
#   bash scripts/framework-env.sh horovod  # Horovod 0.28.1 compiled against Debian's torch 1.13
#   bash scripts/framework-env.sh all      # the four, one path a line
#
# requirements-NAME.txt names what the tests need, pinned; constraints-NAME.txt pins every package
# that comes with them (a pip freeze of a build that ran), so a rebuild gets the same versions.
# The environment lives outside the clone, in $SDDP_FRAMEWORK_CACHE (default
# /var/cache/slurm-ddp/frameworks), under a name keyed by the hash of those two files, the
# Python version and this script: a second run on the same machine reuses it, and a changed pin
# builds a new one. A build is marked complete only at its end, so an interrupted build is never
# mistaken for a finished one (the next run starts it again). Every path is printed on
# stdout; progress goes to stderr. The environments need no network at run time.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${SDDP_FRAMEWORK_CACHE:-/var/cache/slurm-ddp/frameworks}
PYTHON_SERIES=3.12

log() { echo "framework-env: $*" >&2; }
die() { log "$*"; exit 1; }

find_python() {
    local p
    for p in "${SDDP_FRAMEWORK_PYTHON:-}" "$(command -v python$PYTHON_SERIES || true)" \
        /root/.pyenv/versions/$PYTHON_SERIES.*/bin/python$PYTHON_SERIES /usr/bin/python$PYTHON_SERIES; do
        # A pyenv shim is executable but may refuse to run: ask the interpreter itself.
        if [ -n "$p" ] && [ -x "$p" ] && "$p" -c 'import venv' 2>/dev/null; then
            echo "$p"
            return 0
        fi
    done
    return 1
}

build_env() {
    local name=$1 req="$ROOT/tests/frameworks/requirements-$1.txt" python key dir t0=$SECONDS
    local cons="$ROOT/tests/frameworks/constraints-$1.txt"
    local venv_flags=()
    [ -f "$req" ] || die "no requirements file for '$name' ($req); use torch, jax, tf, horovod or all"
    if [ "$name" = horovod ]; then
        # Horovod 0.28.1's torch adapter is C++14/17 and torch 2.15's headers need C++20: it is
        # built against Debian's torch 1.13 (python3-torch, libtorch-dev, pybind11-dev), so the
        # environment is Debian's Python with its system packages, and Debian's Open MPI.
        python=/usr/bin/python3
        "$python" -c 'import torch, torch.utils.cpp_extension' 2>/dev/null ||
            die "horovod: Debian's python3-torch is missing (tests/cluster/install-deps.sh installs it)"
        [ -f /usr/include/torch/extension.h ] && [ -f /usr/include/pybind11/pybind11.h ] ||
            die "horovod: libtorch-dev and pybind11-dev are missing (tests/cluster/install-deps.sh)"
        venv_flags=(--system-site-packages)
        export HOROVOD_WITH_PYTORCH=1 HOROVOD_WITH_MPI=1 HOROVOD_WITH_GLOO=1 \
            HOROVOD_WITHOUT_TENSORFLOW=1 HOROVOD_WITHOUT_MXNET=1 MAKEFLAGS=-j"$(nproc)"
    else
        python=$(find_python) ||
            die "Python $PYTHON_SERIES not found (JAX 0.12 needs >= 3.12): install it or set SDDP_FRAMEWORK_PYTHON"
    fi
    key=$({ cat "$req" "$cons" "$0"; "$python" -c 'import sys; print(sys.version)'; } | sha256sum | cut -c1-12)
    dir="$CACHE/$name-$key"
    if [ -f "$dir/.complete" ]; then
        log "$name: reusing $dir"
        echo "$dir"
        return 0
    fi
    mkdir -p "$CACHE"
    # The venv's scripts carry its path in their #! lines: build it where it will live, under a
    # lock so two runs do not build the same one, and mark it complete last.
    exec 9>"$CACHE/.$name-$key.lock"
    flock 9
    if [ -f "$dir/.complete" ]; then echo "$dir"; return 0; fi
    rm -rf "$dir"
    log "$name: building $dir from $req with $python (first run: several minutes)"
    "$python" -m venv "${venv_flags[@]}" "$dir"
    local pip=("$dir/bin/python" -m pip --disable-pip-version-check --no-input -q)
    local pins=(-c "$cons")
    "${pip[@]}" install --upgrade pip setuptools wheel
    # Packages that compile against torch (deepspeed) import it at build time: torch goes in
    # first, then everything without build isolation.
    if grep -q '^torch==' "$req"; then "${pip[@]}" install "${pins[@]}" "$(grep '^torch==' "$req")"; fi
    "${pip[@]}" install --no-build-isolation "${pins[@]}" -r "$req"
    "$dir/bin/python" -m pip freeze >"$dir/.freeze"
    touch "$dir/.complete"
    flock -u 9
    log "$name: built in $((SECONDS - t0)) s ($(du -sh "$dir" | cut -f1))"
    echo "$dir"
}

case "${1:-}" in
    all) for n in torch jax tf horovod; do build_env "$n"; done ;;
    torch | jax | tf | horovod) build_env "$1" ;;
    *) die "usage: $0 torch|jax|tf|horovod|all" ;;
esac
