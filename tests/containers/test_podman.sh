#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Podman under `srun --ddp`: `podman run` in every task (no SPANK plugin). Podman hands a
# container none of the task's variables unless named (`--env NAME`, `--env 'PREFIX*'`) or all of
# them (--env-host): without them the ranks see no RANK at all; with them a DDP step trains.
# --network=host keeps the node's network (the rendezvous is on the node's address), --uts=host its
# host name. The image is the tree the squashfs images are made of (--rootfs, an overlay on it).
#
# This machine's own limits, not Podman's under Slurm: its sandbox lacks CAP_SYS_RESOURCE, so the
# runtime may not raise an rlimit above what the task has (Podman's defaults do: crun and runc
# fail with "setrlimit `RLIMIT_NOFILE`: Operation not permitted"), and its cgroups are a hybrid
# v1/v2 layout, which crun (Podman's default runtime here) refuses ("cgroups in hybrid mode not
# supported"); runc runs.
source "$(dirname "$0")/container_lib.sh"
command -v podman >/dev/null || { fail "podman not installed (tests/cluster/install-deps.sh)"; finish; }
command -v runc >/dev/null || { fail "runc not installed (tests/cluster/install-deps.sh)"; finish; }
PY=/usr/bin/python3
ROOTFS=$IMAGES/rootfs
nofile=$(ulimit -Hn)
PODMAN=(podman --runtime runc run --rm --network=host --uts=host
    --ulimit "nofile=$nofile:$nofile" --ulimit nproc=32768:32768
    -v "$SDDP_SOURCE_DIR:$SDDP_SOURCE_DIR:ro")
# The rest of the line is the command: the last option.
IMG=(--rootfs "$ROOTFS:O")
# What a PyTorch program and --ddp's own tools read: torchrun's names and SLURM_* (with
# SLURM_DDP_*, the rendezvous secret among them).
ENVS=(--env RANK --env LOCAL_RANK --env WORLD_SIZE --env LOCAL_WORLD_SIZE --env 'MASTER_*'
    --env 'SLURM_*' --env PYTHONPATH)

out=$(srun_t --ddp -N2 --ntasks-per-node=2 "${PODMAN[@]}" "${IMG[@]}" "$VARS" $DDP_VARS 2>&1) ||
    fail_run "srun --ddp podman run (no --env)" $? "$out"
expect_eq "podman run without --env: no rank sees RANK or MASTER_ADDR" \
    "$(grep -c ' RANK=unset .* MASTER_ADDR=unset ' <<<"$out")" 4
out=$(srun_t --ddp -N2 --ntasks-per-node=2 "${PODMAN[@]}" "${ENVS[@]}" "${IMG[@]}" "$VARS" $DDP_VARS 2>&1) ||
    fail_run "srun --ddp podman run --env ..." $? "$out"
check_vars "podman run --env RANK ... --env 'MASTER_*' --env 'SLURM_*'" "$out" 4 n1
out=$(srun_t --ddp -N2 --ntasks-per-node=2 "${PODMAN[@]}" --env-host "${IMG[@]}" "$VARS" $DDP_VARS 2>&1) ||
    fail_run "srun --ddp podman run --env-host" $? "$out"
check_vars "podman run --env-host" "$out" 4 n1
out=$(srun_t --ddp -N2 --ntasks-per-node=2 "${PODMAN[@]}" "${ENVS[@]}" "${IMG[@]}" "$PY" "$FW_DIR/torch_ddp.py" 2>&1) ||
    fail_run "srun --ddp podman run python torch_ddp.py" $? "$out"
check_stack "srun --ddp podman run --env ... python torch_ddp.py (the image's torch 1.13)" "$out" 4
finish
