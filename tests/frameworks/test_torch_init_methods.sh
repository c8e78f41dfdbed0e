#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# PyTorch 2.15 scripts that name their own rendezvous, unchanged but for reading RANK, WORLD_SIZE,
# MASTER_ADDR and MASTER_PORT from the environment (torch_init_methods.py):
# init_method="tcp://$MASTER_ADDR:$MASTER_PORT" meets on the step's MASTER_ADDR:MASTER_PORT, and
# init_method="file://DIR/..." on a folder both nodes share; 2 nodes x 2 ranks, identical weights.
source "$(dirname "$0")/stack_lib.sh"
SRUN_TIMEOUT=${SRUN_TIMEOUT:-300}
VENV=$(stack_env torch)

out=$(srun_t --ddp -N2 --ntasks-per-node=2 "$VENV/bin/python" "$FW_DIR/torch_init_methods.py" tcp 2>&1) || true
check_stack "init_method=tcp://\$MASTER_ADDR:\$MASTER_PORT" "$out" 4

dir=$(stack_tmp)
out=$(srun_t --ddp -N2 --ntasks-per-node=2 "$VENV/bin/python" "$FW_DIR/torch_init_methods.py" file "$dir" 2>&1) || true
lines=$(grep '^STACK torch_file ' <<<"$out" || true)
problems=$(awk '{ for (i = 3; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = substr($i, length(kv[1]) + 2) }
                  n++; seen[f["rank"]]++; d[f["weights"]]++; files[f["port"]]++; hosts[f["host"]]++
                  if (f["world"] != 4) printf "rank %s: world=%s\n", f["rank"], f["world"] }
                END { if (n != 4) printf "%d STACK lines, expected 4\n", n
                      for (r = 0; r < 4; r++) if (seen[r] != 1) printf "rank %d reported %d times\n", r, seen[r] + 0
                      k = 0; for (x in d) k++; if (k != 1) printf "%d weight digests\n", k
                      k = 0; for (x in files) k++; if (k != 1) printf "%d init files\n", k
                      k = 0; for (x in hosts) k++; if (k != 2) printf "ranks on %d nodes, expected 2\n", k }' <<<"$lines")
if [ -n "$lines" ] && [ -z "$problems" ]; then
    pass "init_method=file://$dir/...: 4 ranks on 2 nodes, one init file, identical weights"
else
    fail "init_method=file:// on a shared folder:"; echo "$problems"; tail -30 <<<"$out"
fi
rm -rf "$dir"
finish
