#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The classic torch.multiprocessing.spawn trainer: one task per node under `srun --ddp=launcher`,
# nproc processes per node from PET_NPROC_PER_NODE, rank = node rank x nproc + index, address and
# port from PET_MASTER_ADDR/PET_MASTER_PORT.
source "$(dirname "$0")/stack_lib.sh"
SRUN_TIMEOUT=${SRUN_TIMEOUT:-300}
VENV=$(stack_env torch)

out=$(srun_t --ddp=launcher,nproc=2 -N2 --ntasks-per-node=1 "$VENV/bin/python" "$FW_DIR/torch_spawn.py" 2>&1) || true
check_stack "srun --ddp=launcher,nproc=2 python torch_spawn.py" "$out" 4
# rank = node rank x processes per node + index, and node rank 0 is the master's node.
bad=$(grep '^STACK ' <<<"$out" | awk '{ for (i = 3; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
        if (f["rank"] != f["node_rank"] * 2 + f["index"]) print "rank " f["rank"] ": node_rank=" f["node_rank"] " index=" f["index"]
        if ((f["node_rank"] == 0) != (f["host"] == "n1")) print "rank " f["rank"] ": node_rank=" f["node_rank"] " on " f["host"] }')
expect_eq "rank = node rank x nproc + index, node rank 0 on n1" "$bad" ""
finish
