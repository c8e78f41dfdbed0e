#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# slurm-ddp (the CLI) expands host lists and, run under plain srun, prints exactly what --ddp gives.
source "$(dirname "$0")/lib.sh"
CLI="$SDDP_BUILD_DIR/tools/slurm-ddp"
[ -x "$CLI" ] || skip "CLI not built: $CLI"

expect_eq "hostnames" "$("$CLI" hostnames 'gpu[008-010],login1' | tr '\n' ' ')" "gpu008 gpu009 gpu010 login1 "
rc=0; msg=$("$CLI" hostnames 'n[1-' 2>&1) || rc=$?
expect_eq "bad host list exits 1" "$rc" 1
expect_contains "bad host list names the input" "$msg" "n[1-"
rc=0; msg=$("$CLI" check-options 'prot=1' 2>&1) || rc=$?
expect_eq "bad option exits 1" "$rc" 1
rc=0; "$CLI" frobnicate >/dev/null 2>&1 || rc=$?
expect_eq "unknown command exits 2" "$rc" 2

# The CLI under plain srun and the plugin under srun --ddp derive the same variables
# (MASTER_PORT and SLURM_DDP_STEP differ: they depend on the step id).
strip() { grep -E '^[0-9]+: (MASTER_ADDR|RANK|LOCAL_RANK|WORLD_SIZE|LOCAL_WORLD_SIZE|NODE_RANK|GROUP_RANK|GROUP_WORLD_SIZE|NNODES|ROLE_RANK|ROLE_WORLD_SIZE|ROLE_NAME)=' | sort; }
no_plugin
from_cli=$(srun_t -l -N2 -n5 "$CLI" env | strip)
use_plugin
from_plugin=$(srun_t -l --ddp -N2 -n5 env | strip)
if [ -n "$from_cli" ] && [ "$from_cli" == "$from_plugin" ]; then
    pass "CLI and plugin agree on $(wc -l <<<"$from_cli") variables"
else
    fail "CLI and plugin disagree:"; diff <(echo "$from_cli") <(echo "$from_plugin") | head
fi
table=$(srun_t -N2 -n3 "$CLI" env --table | grep -c 'RANK  HOST')
expect_eq "env --table prints a table per task" "$table" 3
rc=0; msg=$(env -u SLURM_JOB_ID "$CLI" env 2>&1) || rc=$?
expect_contains "outside Slurm: clear error" "$msg" "SLURM_JOB_ID is not set"
# Without --plugstack the CLI reads the plugstack.conf Slurm loads: here the one slurm.conf names
# in PlugStackConfig (found through SLURM_CONF), not /etc/slurm/plugstack.conf.
use_plugin default=on port-range=24800-24803 ports=4
out=$(srun_t --ddp=off -n1 "$CLI" env 2>&1) || true
expect_contains "env without --plugstack applies the site's port-range" "$out" "MASTER_PORT=24800"
expect_not_contains "env without --plugstack finds the plugin's line" "$out" "note:"
use_plugin
finish
