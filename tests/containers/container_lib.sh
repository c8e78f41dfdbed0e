#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Shared by the container tests (tests/containers/test_*.sh): NVIDIA's pyxis on enroot on the
# test cluster, the images, and the checks on what a rank inside a container sees.
#
# pyxis and enroot come from scripts/container-kit.sh, the images from scripts/container-image.sh,
# both cached and built here on first use; a build that fails fails the test (a runtime that cannot
# be installed is not supported). Every container gets the source tree, the build folder
# (read-only) and the test's own WORK folder at their own paths, so the trainers, the C example,
# slurm-ddp and the files the ranks write are where they are outside.
# The framework tests' library: lib.sh, check_stack (one STACK line per rank, identical weights, a
# rendezvous on the step's MASTER_ADDR and on the first port of its block) and the PYTHONPATH of
# their report (stack_report.py), which pyxis hands on to the container with the job's environment.
# A container start adds a few seconds per step to torch's import (lib.sh's default is 60 s).
SRUN_TIMEOUT=${SRUN_TIMEOUT:-180}
source "$(dirname "${BASH_SOURCE[0]}")/../frameworks/stack_lib.sh"
CTR_DIR="$SDDP_SOURCE_DIR/tests/containers"

# kit SCRIPT ARGS...: a path printed by scripts/SCRIPT; a failed build ends the test with a FAIL
# line on stderr (the caller captures stdout).
kit() {
    local script=$1 out
    shift
    out=$(bash "$SDDP_SOURCE_DIR/scripts/$script" "$@") ||
        { fail "scripts/$script $* failed: the container runtime or image could not be built" >&2; exit 1; }
    echo "$out"
}
# pyxis loads only under the Slurm whose spank.h built it: the cluster's.
slurm_include=/usr/include
[ -z "${SDDP_CLUSTER_SLURM_PREFIX:-}" ] || slurm_include=$SDDP_CLUSTER_SLURM_PREFIX/include
PYXIS_SO=$(kit container-kit.sh pyxis "$slurm_include")/spank_pyxis.so || exit 1
ENROOT=$(kit container-kit.sh enroot) || exit 1
IMAGES=$(kit container-image.sh) || exit 1
IMAGE=$IMAGES/image.sqsh                # PYTORCH_VERSION, as NGC's PyTorch images
IMAGE_MASTER=$IMAGES/image-master.sqsh  # also MASTER_ADDR=localhost MASTER_PORT=29500

WORK=$(mktemp -d "$SDDP_WORK_ROOT/sddp-ctr.XXXXXX")
chmod 755 "$WORK"
CTR_MOUNTS="$SDDP_SOURCE_DIR:$SDDP_SOURCE_DIR:ro,$WORK:$WORK"
case $SDDP_BUILD_DIR/ in
    "$SDDP_SOURCE_DIR"/*) ;;
    *) CTR_MOUNTS+=",$SDDP_BUILD_DIR:$SDDP_BUILD_DIR:ro" ;;
esac
VARS="$CTR_DIR/task_vars.sh"

# use_pyxis first|last extra-hooks|no-extra-hooks [PYXIS_ARGS...]: pyxis in plugstack.conf before
# or after slurm-ddp (tests/cluster/containers.sh); the test's end takes it out again.
use_pyxis() { bash "$CLUSTER" pyxis "$PYXIS_SO" "$ENROOT" "$@" >/dev/null; }
no_pyxis() { bash "$CLUSTER" pyxis none >/dev/null; }
container_cleanup() {
    no_pyxis
    use_plugin
    rm -rf "$WORK"
}
trap container_cleanup EXIT

# csrun IMAGE SRUN_ARGS...: a bounded srun whose tasks run in IMAGE.
csrun() {
    local image=$1
    shift
    srun_t --container-image="$image" --container-mounts="$CTR_MOUNTS" "$@"
}

# check_vars WHAT OUTPUT NTASKS MASTER: the task_vars.sh lines of OUTPUT (names RANK LOCAL_RANK
# WORLD_SIZE MASTER_ADDR MASTER_PORT SLURM_DDP_PORTS SLURM_LOCALID, in any order) are one per
# rank 0..NTASKS-1, each with RANK = SLURM_PROCID, LOCAL_RANK = SLURM_LOCALID, WORLD_SIZE =
# NTASKS, MASTER_ADDR = MASTER and MASTER_PORT = the first port of the step's SLURM_DDP_PORTS:
# the step's variables, not the image's, enroot's hook's or another task's.
check_vars() {
    local what=$1 out=$2 n=$3 master=$4 problems
    problems=$(awk -v N="$n" -v M="$master" '
        $1 != "vars" { next }
        { delete f; for (i = 4; i <= NF; i++) { k = $i; sub(/=.*/, "", k); v = $i; sub(/^[^=]*=/, "", v); f[k] = v }
          r = $2; lines++; seen[r]++; split(f["SLURM_DDP_PORTS"], pr, "-")
          if (f["RANK"] != r) printf "task %s on %s: RANK=%s\n", r, $3, f["RANK"]
          if (f["LOCAL_RANK"] != f["SLURM_LOCALID"]) printf "task %s on %s: LOCAL_RANK=%s but SLURM_LOCALID=%s\n", r, $3, f["LOCAL_RANK"], f["SLURM_LOCALID"]
          if (f["WORLD_SIZE"] != N) printf "task %s on %s: WORLD_SIZE=%s, expected %s\n", r, $3, f["WORLD_SIZE"], N
          if (f["MASTER_ADDR"] != M) printf "task %s on %s: MASTER_ADDR=%s, expected %s\n", r, $3, f["MASTER_ADDR"], M
          if (f["SLURM_DDP_PORTS"] == "unset") printf "task %s on %s: no SLURM_DDP_PORTS: not set up by --ddp\n", r, $3
          else if (f["MASTER_PORT"] != pr[1]) printf "task %s on %s: MASTER_PORT=%s, not the first port of SLURM_DDP_PORTS=%s\n", r, $3, f["MASTER_PORT"], f["SLURM_DDP_PORTS"] }
        END { if (lines != N) printf "%d task lines, expected %d\n", lines, N
              for (r = 0; r < N; r++) if (seen[r] != 1) printf "task %d reported %d times\n", r, seen[r] + 0 }' <<<"$out")
    if [ -z "$problems" ]; then pass "$what: $n ranks with the step's RANK, WORLD_SIZE, MASTER_ADDR=$master and MASTER_PORT"
    else fail "$what:"; echo "$problems"; grep '^vars ' <<<"$out" || tail -20 <<<"$out"; fi
}
DDP_VARS="RANK LOCAL_RANK WORLD_SIZE MASTER_ADDR MASTER_PORT SLURM_DDP_PORTS SLURM_LOCALID"

# var_of NAME PROCID OUTPUT: NAME's value on that task's task_vars.sh line.
var_of() { awk -v r="$2" -v n="$1" '$1 == "vars" && $2 == r { for (i = 4; i <= NF; i++) if (index($i, n "=") == 1) print substr($i, length(n) + 2) }' <<<"$3"; }
