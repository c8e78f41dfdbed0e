#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# GPU binding on the real cluster with fake gres devices (4 per node), across 2 nodes: for every
# policy and Slurm GPU option, device index SLURM_DDP_DEVICE of CUDA_VISIBLE_DEVICES is the task's
# own GPU, no two tasks of a node share one, and steps without --ddp keep Slurm's values.
# Under the production profile (ConstrainDevices=yes) Slurm numbers the GPUs a task may open from
# 0 and a task it binds to GPUs may open only those: there the own GPU is found through the device
# files the task can open, and a narrowed task keeps Slurm's list (its peers' GPUs are not there).
source "$(dirname "$0")/lib.sh"
[ "${SDDP_CLUSTER_GPUS_PER_NODE:-0}" -ge 4 ] || skip "cluster has fewer than 4 fake GPUs per node"
confined=0
[ "${SDDP_CLUSTER_PROFILE:-basic}" = production ] && confined=1
# The GPUs a task Slurm binds to GPUs sees: the node's 4 (--ddp restores them), or its own only.
narrowed=4
[ $confined = 1 ] && narrowed=1

# The fake GPUs of the node this task may open (a device cgroup answers EPERM; no driver: ENXIO).
OPENABLE='o=; for f in $SDDP_CLUSTER_DIR/dev/$SLURMD_NODENAME/nvidia*; do (exec 3<$f) 2>&1 | grep -q "not permitted" || o=$o${o:++}${f##*nvidia}; done'
LINE="$OPENABLE;"' echo gpu $SLURM_PROCID $SLURMD_NODENAME ${LOCAL_RANK:-unset} ${CUDA_VISIBLE_DEVICES:-unset} ${SLURM_DDP_DEVICE:-unset} ${OMP_NUM_THREADS:-unset} ${o:-none}'
# gpus ARGS... : one line per task: gpu RANK HOST LOCAL_RANK CVD DEVICE OMP OPENABLE
gpus() { srun_t "$@" bash -c "$LINE" | sort -k2n; }
# The physical GPU (device file number) an entry of a task's CUDA_VISIBLE_DEVICES stands for:
# where the task may open fewer than the node's GPUs, the entries count its openable ones.
PHYS='function phys(entry, openable,   o, n) { n = split(openable, o, "+"); return n < 4 ? o[entry + 1] : entry }'

# check_binding WHAT OUTPUT NTASKS VISIBLE_COUNT: every task's own GPU (CVD[DEVICE]) is distinct on
# its node, DEVICE is LOCAL_RANK where the whole list is visible, and each task sees VISIBLE_COUNT.
check_binding() {
    local what=$1 out=$2 n=$3 count=$4 problems
    problems=$(awk -v N="$n" -v C="$count" "$PHYS"'
        $1 != "gpu" { next }
        { lines++; split($5, v, ","); k = length(v); own = phys(v[$6 + 1], $8)
          if (k != C) printf "rank %s sees %d GPUs (%s), expected %d\n", $2, k, $5, C
          if ($6 == "unset" || own == "") printf "rank %s: no own device (CVD=%s, SLURM_DDP_DEVICE=%s)\n", $2, $5, $6
          if (C > 1 && $6 != $4) printf "rank %s: device %s != LOCAL_RANK %s\n", $2, $6, $4
          key = $3 ":" own; if (key in seen) printf "rank %s and %s share GPU %s on %s\n", seen[key], $2, own, $3; seen[key] = $2 }
        END { if (lines != N) printf "%d lines, expected %d\n", lines, N }' <<<"$out")
    if [ -z "$problems" ]; then pass "$what"; else fail "$what:"; echo "$problems"; echo "$out"; fi
}

check_binding "local, --gres=gpu:4, 4 tasks per node" "$(gpus --ddp -N2 --ntasks-per-node=4 --gres=gpu:4)" 8 4
check_binding "local, --gpus-per-task=1 (Slurm narrows; --ddp restores the node list where it can)" \
    "$(gpus --ddp -N2 --ntasks-per-node=4 --gpus-per-task=1)" 8 $narrowed
check_binding "local, --gpus-per-node=4" "$(gpus --ddp -N2 --ntasks-per-node=4 --gpus-per-node=4)" 8 4
check_binding "local, --gpu-bind=map_gpu:3,2,1,0 (user's choice respected)" \
    "$(gpus --ddp -N2 --ntasks-per-node=4 --gres=gpu:4 --gpu-bind=map_gpu:3,2,1,0)" 8 $narrowed
out=$(gpus --ddp -N2 --ntasks-per-node=4 --gres=gpu:4 --gpu-bind=map_gpu:3,2,1,0)
expect_eq "map_gpu: local rank 0 owns GPU 3" "$(awk "$PHYS"'$2 == 0 { split($5, v, ","); print phys(v[$6 + 1], $8) }' <<<"$out")" 3
check_binding "local, fewer tasks than GPUs" "$(gpus --ddp -N2 --ntasks-per-node=2 --gres=gpu:4)" 4 4
check_binding "single" "$(gpus --ddp=gpu-bind=single -N2 --ntasks-per-node=4 --gres=gpu:4)" 8 1
check_binding "closest (falls back to local order without CPU binding)" \
    "$(gpus --ddp=gpu-bind=closest -N2 --ntasks-per-node=4 --gres=gpu:4)" 8 4

# Slurm's own lists for -n2 --gpus-per-task=1: 0 and 1, or 0 and 0 where each task is confined.
slurms="0/unset 1/unset "
[ $confined = 1 ] && slurms="0/unset 0/unset "
out=$(gpus --ddp=gpu-bind=none -N1 -n2 --gpus-per-task=1)
expect_eq "none: Slurm's narrowed lists kept" "$(awk '{print $5 "/" $6}' <<<"$out" | tr '\n' ' ')" "$slurms"
out=$(gpus -N1 -n2 --gpus-per-task=1)
expect_eq "no --ddp: Slurm's values kept" "$(awk '{print $5 "/" $6}' <<<"$out" | tr '\n' ' ')" "$slurms"
expect_eq "no --ddp: OMP_NUM_THREADS not set" "$(awk '{print $7}' <<<"$out" | sort -u)" unset

# A second job on the same node gets global indices 2,3: the binding uses them as Slurm gave them.
# The first job must be running (holding GPUs 0,1) before the second is placed, or the second
# would get 0,1 and prove nothing.
job=$(sbatch --parsable -o /dev/null -w n1 -N1 -n1 --gres=gpu:2 --wrap "sleep 120")
state=""
for _ in $(seq $((SRUN_TIMEOUT * 5))); do
    state=$(squeue -h -j "$job" -o %T)
    [ "$state" = RUNNING ] && break
    sleep 0.2
done
if [ "$state" = RUNNING ]; then
    pass "first job $job holds 2 GPUs of n1"
    out=$(gpus --ddp -w n1 -N1 -n2 --gres=gpu:2)
    check_binding "second job on a node" "$out" 2 2
    expect_eq "second job's GPUs are devices 2 and 3" \
        "$(awk "$PHYS"'$2 == 0 { split($5, v, ","); print phys(v[1], $8) "," phys(v[2], $8) }' <<<"$out")" "2,3"
else
    fail "first job $job not running after ${SRUN_TIMEOUT}s (state '$state'): second-job checks not run"
fi
scancel "$job"

# More tasks than GPUs: refused with the counts and the fixes; gpu-share opts in.
rc=0; msg=$(srun_t --ddp -N1 -n4 --gres=gpu:2 true 2>&1) || rc=$?
[ $rc -ne 0 ] && pass "4 tasks on 2 GPUs refused" || fail "4 tasks on 2 GPUs ran"
expect_contains "refusal names the counts" "$msg" "4 tasks of this step run on this node but the step has only 2 GPU(s)"
expect_contains "refusal names the opt-in" "$msg" "gpu-share"
out=$(gpus --ddp=gpu-share -N1 -n4 --gres=gpu:2)
expect_eq "gpu-share: round robin" "$(awk '{ split($5, v, ","); printf "%s", v[$6 + 1] }' <<<"$out")" "0101"

# OMP_NUM_THREADS follows the CPU allocation, and a user's value is kept.
out=$(gpus --ddp -N1 -n1 -c3)
expect_eq "OMP_NUM_THREADS from --cpus-per-task" "$(awk '{print $7}' <<<"$out")" 3
out=$(OMP_NUM_THREADS=7 gpus --ddp -N1 -n1 -c3)
expect_eq "user's OMP_NUM_THREADS kept" "$(awk '{print $7}' <<<"$out")" 7

# CPU-only steps: nothing GPU-related is set.
out=$(gpus --ddp -N2 -n2)
expect_eq "no GPUs: CUDA_VISIBLE_DEVICES and SLURM_DDP_DEVICE unset" "$(awk '{print $5 $6}' <<<"$out" | sort -u)" "unsetunset"

out=$(srun_t --ddp=verbose -N2 --ntasks-per-node=2 --gres=gpu:2 true 2>&1)
expect_contains "verbose table shows each local rank's GPU" "$out" "1 (CUDA_VISIBLE_DEVICES=0,1, device 1)"
finish
