#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Charliecloud under `srun --ddp`: `ch-run IMAGE -- CMD` in every task (no SPANK plugin; the task
# starts the container itself). ch-run hands the container the task's whole environment, so the
# step's variables arrive as they are and a DDP step trains; the image's own variables come in
# only with --set-env, and then win over the step's (the pitfall to avoid with an image that
# carries MASTER_ADDR). The image is the squashfs the pyxis tests run; ch-run mounts it itself.
source "$(dirname "$0")/container_lib.sh"
command -v ch-run >/dev/null || { fail "ch-run not installed (tests/cluster/install-deps.sh: charliecloud-runtime)"; finish; }
PY=/usr/bin/python3
# ch-run refuses to start without USER ("$USER not set"), which a job started outside a login
# shell may lack.
export USER=${USER:-$(id -un)}
# A read-only image has no mount point of its own for the source tree: /mnt is there.
SRC=/mnt
CH=(ch-run -b "$SDDP_SOURCE_DIR:$SRC")
export PYTHONPATH=$SRC/tests/frameworks
inner_vars=$SRC/tests/containers/task_vars.sh

out=$(srun_t --ddp -N2 --ntasks-per-node=2 "${CH[@]}" "$IMAGE_MASTER" -- "$inner_vars" $DDP_VARS 2>&1) ||
    fail_run "srun --ddp ch-run" $? "$out"
check_vars "srun --ddp ch-run IMAGE: the task's environment as it is" "$out" 4 n1
out=$(srun_t --ddp -N2 --ntasks-per-node=2 "${CH[@]}" "$IMAGE_MASTER" -- "$PY" "$SRC/tests/frameworks/torch_ddp.py" 2>&1) ||
    fail_run "srun --ddp ch-run python torch_ddp.py" $? "$out"
check_stack "srun --ddp ch-run IMAGE -- python torch_ddp.py (the image's torch 1.13)" "$out" 4
# --set-env=FILE: the file's values win over the task's.
printf 'MASTER_ADDR=localhost\nMASTER_PORT=29500\n' >"$WORK/image.env"
out=$(srun_t --ddp -N1 -n1 "${CH[@]}" --set-env="$WORK/image.env" "$IMAGE_MASTER" -- "$inner_vars" MASTER_ADDR MASTER_PORT 2>&1) ||
    fail_run "srun --ddp ch-run --set-env" $? "$out"
expect_contains "ch-run --set-env: the file's MASTER_ADDR/MASTER_PORT replace the step's" "$out" \
    "MASTER_ADDR=localhost MASTER_PORT=29500"
finish
