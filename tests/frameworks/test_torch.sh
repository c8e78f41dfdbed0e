#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# PyTorch 2.15 DDP on gloo with init_method="env://": one task per rank under plain `srun --ddp`,
# then torchrun per node under `srun --ddp=launcher`, whose workers must meet on the agent's store
# at PET_MASTER_ADDR:PET_MASTER_PORT (the first port of the step's block), not a port of its own.
source "$(dirname "$0")/stack_lib.sh"
SRUN_TIMEOUT=${SRUN_TIMEOUT:-300}
VENV=$(stack_env torch)

out=$(srun_t --ddp -N2 --ntasks-per-node=2 "$VENV/bin/python" "$FW_DIR/torch_ddp.py" 2>&1) || true
check_stack "srun --ddp python torch_ddp.py (env://, gloo)" "$out" 4
expect_eq "every rank ran directly under srun" "$(grep '^STACK ' <<<"$out" | grep -c 'launcher=srun')" 4

out=$(srun_t --ddp=launcher,nproc=2 -N2 --ntasks-per-node=1 "$VENV/bin/torchrun" "$FW_DIR/torch_ddp.py" 2>&1) || true
check_stack "srun --ddp=launcher,nproc=2 torchrun torch_ddp.py" "$out" 4
lines=$(grep '^STACK ' <<<"$out" || true)
expect_eq "4 torchrun workers" "$(grep -c 'launcher=torchrun' <<<"$lines")" 4
# torchrun's static rendezvous hands its own store to the workers: their MASTER_PORT is the step's.
bad=$(awk '{ for (i = 3; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
             if (f["worker_port"] != f["env_port"]) print }' <<<"$lines")
expect_eq "workers' MASTER_PORT is PET_MASTER_PORT (torchrun's agent store)" "$bad" ""

# A step that names another framework's options only gains variables: the same PyTorch program
# trains as before under --ddp=jax,hostfile and --ddp=tf.
for opt in jax,hostfile tf; do
    out=$(srun_t --ddp=$opt -N2 --ntasks-per-node=2 "$VENV/bin/python" "$FW_DIR/torch_ddp.py" 2>&1) || true
    check_stack "srun --ddp=$opt python torch_ddp.py (a PyTorch program under another stack's option)" "$out" 4
done
finish
