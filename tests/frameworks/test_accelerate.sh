#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Accelerate 1.15: a script using Accelerator() under plain `srun --ddp`, and `accelerate launch`
# per node under `srun --ddp=launcher`. accelerate launch reads no environment variable for its
# own options, but hands torchrun a namespace parsed by torchrun's parser, whose defaults are the
# PET_* variables: with one machine in accelerate's eyes it sets only nproc_per_node and
# master_port (default 29500), and torchrun takes nnodes, node_rank and master_addr from PET_*.
source "$(dirname "$0")/stack_lib.sh"
SRUN_TIMEOUT=${SRUN_TIMEOUT:-300}
VENV=$(stack_env torch)
export PATH="$VENV/bin:$PATH"

out=$(srun_t --ddp -N2 --ntasks-per-node=2 python "$FW_DIR/accelerate_ddp.py" 2>&1) || true
check_stack "srun --ddp python accelerate_ddp.py (Accelerator())" "$out" 4
expect_eq "Accelerate went multi-process on CPU" "$(grep '^STACK ' <<<"$out" | grep -c 'distributed_type=MULTI_CPU')" 4

# The shortest line that works: the per-node process count and the step's port.
out=$(srun_t --ddp=launcher,nproc=2 -N2 --ntasks-per-node=1 bash -c \
    'exec accelerate launch --multi_gpu --num_processes=$PET_NPROC_PER_NODE --main_process_port=$PET_MASTER_PORT "$0"' \
    "$FW_DIR/accelerate_ddp.py" 2>&1) || true
check_stack "accelerate launch --multi_gpu --num_processes=\$PET_NPROC_PER_NODE --main_process_port=\$PET_MASTER_PORT" "$out" 4
bad=$(grep '^STACK ' <<<"$out" | grep -v 'launcher=accelerate-launch' || true)
expect_eq "all 4 workers started by accelerate launch" "$bad" ""
bad=$(grep '^STACK ' <<<"$out" | awk '{ for (i = 3; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
        if (f["worker_port"] != f["env_port"]) print }')
expect_eq "accelerate launch workers' MASTER_PORT is the step's (not accelerate's 29500)" "$bad" ""
finish
