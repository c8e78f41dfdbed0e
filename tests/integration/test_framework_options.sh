#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# --ddp=help, and the framework options jax, tf and hostfile on the real cluster: the values each
# rank gets, the host file on every node during the step and gone after it.
source "$(dirname "$0")/lib.sh"

# --ddp=help: the table on stdout, exit 0, nothing launched (srun and sbatch).
rc=0
out=$(timeout "$SRUN_TIMEOUT" srun --ddp=help -n1 sh -c 'echo RAN-THE-PROGRAM' 2>&1) || rc=$?
expect_eq "srun --ddp=help exits 0" "$rc" "0"
expect_contains "srun --ddp=help prints the table" "$out" "gpu-bind=local|single|closest|none"
expect_contains "srun --ddp=help names the variables" "$out" "TF_CONFIG"
expect_contains "srun --ddp=help marks site-only keys" "$out" "[site only: plugstack.conf]"
expect_not_contains "srun --ddp=help runs no program" "$out" "RAN-THE-PROGRAM"
rc=0
out=$(timeout "$SRUN_TIMEOUT" sbatch --ddp=help --wrap true 2>&1) || rc=$?
expect_eq "sbatch --ddp=help exits 0" "$rc" "0"
expect_contains "sbatch --ddp=help prints the table" "$out" "hostfile"
expect_not_contains "sbatch --ddp=help submits nothing" "$out" "Submitted batch job"

# jax: the coordinator is the step's MASTER_ADDR:MASTER_PORT, ids per rank.
jax_line='echo jax $SLURM_PROCID $JAX_COORDINATOR_ADDRESS $MASTER_ADDR:$MASTER_PORT $JAX_NUM_PROCESSES $JAX_PROCESS_ID ${JAX_LOCAL_DEVICE_IDS:-unset} ${SLURM_DDP_DEVICE:-unset}'
out=$(srun_t --ddp=jax -N2 -n4 sh -c "$jax_line" 2>&1) || true
bad=$(awk '$1 == "jax" { n++; if ($3 != $4 || $5 != 4 || $6 != $2 || $7 != "unset") print }
           END { if (n != 4) print n " lines" }' <<<"$out")
expect_eq "jax: coordinator = MASTER_ADDR:MASTER_PORT, 4 processes, id = rank (CPU step)" "$bad" ""
out=$(srun_t --ddp=jax -N2 --ntasks-per-node=2 --gres=gpu:2 sh -c "$jax_line" 2>&1) || true
bad=$(awk '$1 == "jax" { n++; if ($7 != $8 || $7 == "unset") print } END { if (n != 4) print n " lines" }' <<<"$out")
expect_eq "jax: JAX_LOCAL_DEVICE_IDS = SLURM_DDP_DEVICE with GPUs" "$bad" ""
[ -n "$bad" ] && echo "$out"

# tf: one worker per rank in RANK order, on the rank's own host, distinct ports per host.
out=$(srun_t --ddp=tf -N2 -n4 sh -c 'echo "tf $RANK $(hostname) $CUDA_VISIBLE_DEVICES $TF_CONFIG"' 2>&1) || true
bad=$(python3 -c '
import json, sys
rows = [l.split(" ", 4) for l in sys.stdin.read().splitlines() if l.startswith("tf ")]
if len(rows) != 4: print(len(rows), "lines")
specs = {int(r[1]): (r[2], json.loads(r[4])) for r in rows}
workers = {json.dumps(s["cluster"]["worker"]) for _, s in specs.values()}
if len(workers) != 1: print("ranks disagree on the worker list")
for rank, (host, spec) in specs.items():
    w = spec["cluster"]["worker"]
    if spec["task"] != {"type": "worker", "index": rank}: print("rank", rank, "task", spec["task"])
    if w[rank].split(":")[0] != host: print("rank", rank, "runs on", host, "but worker is", w[rank])
    if len(set(w)) != len(w): print("duplicate worker addresses", w)
' <<<"$out")
expect_eq "tf: TF_CONFIG lists every rank on its own host and port, index = RANK" "$bad" ""
[ -n "$bad" ] && echo "$out"
out=$(srun_t --ddp=tf -N1 -n2 --gres=gpu:2 sh -c 'echo "tfgpu $SLURM_LOCALID $CUDA_VISIBLE_DEVICES"' 2>&1) || true
expect_eq "tf: each worker sees only its own GPU" "$(awk '$1 == "tfgpu" { print $2 "=" $3 }' <<<"$out" | sort | tr '\n' ' ')" "0=0 1=1 "

# hostfile: every task reads the same file (rank 0's node first), and it is gone after the step.
out=$(srun_t --ddp=hostfile,tf -N2 -n3 sh -c 'echo "hf $SLURM_PROCID $(hostname) $SLURM_DDP_HOSTFILE $(tr "\n" ";" <"$SLURM_DDP_HOSTFILE")"' 2>&1) || true
expect_eq "hostfile: every task reads 'n1 slots=2;n2 slots=1;'" \
    "$(awk '$1 == "hf" { $1 = $2 = $3 = $4 = ""; sub(/^ +/, ""); print }' <<<"$out" | sort -u)" "n1 slots=2;n2 slots=1;"
expect_eq "hostfile: 3 tasks on 2 nodes saw it" "$(awk '$1 == "hf" { print $3 }' <<<"$out" | sort | uniq -c | awk '{ printf "%s%s ", $2, $1 }')" "n12 n21 "
path=$(awk '$1 == "hf" { print $4; exit }' <<<"$out")
gone=no
for _ in $(seq 50); do [ -e "$path" ] || { gone=yes; break; }; sleep 0.1; done
expect_eq "hostfile: $path removed when the step ended" "$gone" "yes"
out=$(srun_t --ddp=hostfile,launcher -N2 --ntasks-per-node=1 --gres=gpu:2 sh -c 'tr "\n" ";" <"$SLURM_DDP_HOSTFILE"; echo' 2>&1) || true
expect_eq "hostfile under launcher: slots = workers per node" "$(grep '^n1 ' <<<"$out" | sort -u)" "n1 slots=2;n2 slots=2;"

# slurm-ddp check names the framework variables it finds.
out=$(srun_t --ddp=jax,hostfile -N2 -n2 "$SDDP_BUILD_DIR/tools/slurm-ddp" check 2>&1) || true
expect_contains "slurm-ddp check names JAX_COORDINATOR_ADDRESS" "$out" "framework variables: JAX_COORDINATOR_ADDRESS="
expect_contains "slurm-ddp check names SLURM_DDP_HOSTFILE" "$out" "SLURM_DDP_HOSTFILE=/tmp/slurm-ddp-hostfile."
expect_not_contains "slurm-ddp check finds the host file readable" "$out" "NOT READABLE"

# A program of another framework is not harmed: only variables are added.
out=$(srun_t --ddp=jax,tf,hostfile -N2 -n2 "$PRINTER" 2>&1) || true
check_world "$out" 2 2 n1
finish
