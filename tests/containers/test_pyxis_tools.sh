#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# What else runs inside a pyxis container under --ddp, pyxis listed first: torchrun per node
# under --ddp=launcher (the image's torch), the C example on libbootstrap's authenticated TCP
# rendezvous, `slurm-ddp check` as the program and --ddp=check before it (both from the build
# folder mounted at its own path: the image has no scontrol and no slurm-ddp), and --ddp=hostfile's
# file. GPUs: test_pyxis_gpus.sh.
source "$(dirname "$0")/container_lib.sh"
C="$SDDP_BUILD_DIR/examples/c_minimal/c_minimal"
TOOL="$SDDP_BUILD_DIR/tools/slurm-ddp"
TRAINER="$SDDP_SOURCE_DIR/examples/pytorch/train_ddp.py"
use_pyxis first extra-hooks use_squashfuse=1

# ---- torchrun per node --------------------------------------------------------------------
out=$(csrun "$IMAGE" --ddp=launcher -N2 --ntasks-per-node=1 "$VARS" PET_MASTER_ADDR PET_MASTER_PORT \
    PET_NNODES PET_NODE_RANK SLURM_DDP_PORTS 2>&1) || fail_run "--ddp=launcher in a container" $? "$out"
ports=$(var_of SLURM_DDP_PORTS 1 "$out")
expect_eq "launcher in a container: PET_MASTER_ADDR:PET_MASTER_PORT is the step's" \
    "$(var_of PET_MASTER_ADDR 1 "$out"):$(var_of PET_MASTER_PORT 1 "$out")" "n1:${ports%-*}"
expect_eq "launcher in a container: PET_NNODES and PET_NODE_RANK" \
    "$(var_of PET_NNODES 1 "$out") $(var_of PET_NODE_RANK 0 "$out") $(var_of PET_NODE_RANK 1 "$out")" "2 0 1"
# Debian's torch 1.13 on Python 3.11 needs --redirects/--tee to start (SLURM_NOTES).
out=$(cd "$WORK" && PET_REDIRECTS=1 PET_TEE=1 csrun "$IMAGE_MASTER" --ddp=launcher,nproc=2 -N2 \
    --ntasks-per-node=1 torchrun "$TRAINER" --epochs 2 2>&1) ||
    fail_run "torchrun under --ddp=launcher in a container" $? "$out"
expect_contains "torchrun per node in a container: 4 workers across 2 nodes" "$out" "[rank 0/4]"
expect_contains "torchrun per node in a container: identical weights" "$out" "OK: 4 ranks hold identical weights"

# ---- the C example and slurm-ddp ----------------------------------------------------------
if [ -x "$C" ]; then
    out=$(csrun "$IMAGE" --ddp -N2 -n4 "$C" 2>&1) || fail_run "the C example in a container" $? "$out"
    expect_eq "C example in a container: 4 ranks met over the plugin's authenticated TCP" \
        "$(grep -cE '^rank [0-3] of 4 on n[12]: .*\(identity: ddp, transport: tcp\)' <<<"$out")" 4
    expect_contains "C example in a container: the hosts of the step" "$out" "hosts: 0=n1 1=n1 2=n1 3=n2"
else
    fail "the C example is not built ($C): configure with -DSDDP_BUILD_EXAMPLES=ON"
fi
out=$(csrun "$IMAGE" --ddp -N2 -n4 "$TOOL" check 2>&1) || fail_run "slurm-ddp check in a container" $? "$out"
expect_contains "slurm-ddp check in a container: the verdict" "$out" "slurm-ddp check: OK: 4 ranks can rendezvous"
# --ddp=check runs the tool inside the container, where pyxis has put the task: a path the image has.
out=$(SLURM_DDP_CHECK_TOOL=$TOOL csrun "$IMAGE" --ddp=check -N2 -n2 "$VARS" RANK 2>&1) ||
    fail_run "--ddp=check in a container" $? "$out"
expect_eq "--ddp=check in a container: the program starts after the check" "$(grep -c '^vars ' <<<"$out")" 2

# --ddp=hostfile: written in task_init, which runs in the container (pyxis first), so the file is
# in the container's own /tmp, where DeepSpeed's or MPI's launcher inside it reads it.
out=$(csrun "$IMAGE" --ddp=hostfile -N2 --ntasks-per-node=1 bash -c 'cat "$SLURM_DDP_HOSTFILE"' 2>&1) ||
    fail_run "--ddp=hostfile in a container" $? "$out"
expect_eq "--ddp=hostfile in a container: both tasks read 'n1 slots=1' and 'n2 slots=1'" \
    "$(grep -c '^n1 slots=1$' <<<"$out") $(grep -c '^n2 slots=1$' <<<"$out")" "2 2"
finish
