#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Installed site-wide, the plugin must not add or change one variable in a step without --ddp,
# in the batch script, or when its own plugin arguments are broken.
source "$(dirname "$0")/lib.sh"

# Variables that differ between any two steps (or jobs), plugin or not.
VARYING='^[0-9]+: (SLURM_STEP_ID|SLURM_STEPID|SLURM_TASK_PID|SLURM_SRUN_COMM_PORT|SLURM_STEP_LAUNCHER_PORT|SLURM_JOB_ID|SLURM_JOBID|SLURM_JOB_START_TIME|SLURM_JOB_END_TIME|SLURM_STEP_RESV_PORTS|SLURM_JOB_SLUID)='
step_env() { srun_t -l "$@" env | grep -Ev "$VARYING" | sort; }

no_plugin
baseline=$(step_env -N2 -n4)
baseline_gpu=$(step_env -N2 -n2 --gres=gpu:2)
use_plugin
with_plugin=$(step_env -N2 -n4)
with_plugin_gpu=$(step_env -N2 -n2 --gres=gpu:2)
if [ "$baseline" == "$with_plugin" ] && [ "$baseline_gpu" == "$with_plugin_gpu" ]; then
    pass "non --ddp step environment identical with and without the plugin ($(wc -l <<<"$baseline") lines)"
else
    fail "non --ddp step environment changed by the plugin:"
    diff <(echo "$baseline") <(echo "$with_plugin") | head -20
    diff <(echo "$baseline_gpu") <(echo "$with_plugin_gpu") | head -20
fi

# A broken site configuration never disturbs steps that do not use --ddp.
use_plugin port-range=banana default=maybe
broken=$(step_env -N2 -n4) || true
expect_eq "broken plugin arguments: non --ddp step still identical" "$broken" "$baseline"
msg=$(srun_t --ddp -n1 true 2>&1) && fail "--ddp step with broken plugin arguments was launched" || true
expect_contains "broken plugin arguments: --ddp step refused with the reason" "$msg" "plugstack.conf"
use_plugin

# The batch script itself is untouched even under #SBATCH --ddp; its srun steps are not.
out=$(sbatch_out -N2 -n2 --ddp --wrap "echo batch RANK=\${RANK:-unset} MASTER_ADDR=\${MASTER_ADDR:-unset} SECRET=\${SLURM_DDP_SECRET:-unset}; srun $PRINTER")
expect_contains "batch script has no DDP variables" "$out" "batch RANK=unset MASTER_ADDR=unset SECRET=unset"
check_world "$out" 2 2 n1

# With default=on a plain step gets DDP, and --ddp=off leaves it exactly as Slurm made it.
use_plugin default=on
out=$(srun_t -N2 -n2 "$PRINTER")
check_world "$out" 2 2 n1
off=$(step_env --ddp=off -N2 -n4)
expect_eq "default=on with --ddp=off: environment identical to no plugin" "$off" "$baseline"

# default=on never fails a step that did not ask: where --ddp cannot be set up the step runs as
# Slurm made it (no RANK); the same step with --ddp fails with the reason.
site_default_case() {  # WHAT SRUN-ARGS... : rc 0 and no RANK without --ddp, refused with it
    local what=$1; shift
    local out rc
    out=$(srun_t "$@" sh -c 'echo "RANK=${RANK:-unset}"') && rc=0 || rc=$?
    expect_eq "default=on, $what: the step runs, without DDP" \
        "$rc:$(sort -u <<<"$out" | tr '\n' ' ')" "0:RANK=unset "
    srun_t --ddp "$@" true >/dev/null 2>&1 && rc=0 || rc=$?
    expect_eq "default=on, $what: with --ddp the step fails" "$([ "$rc" -ne 0 ] && echo failed)" failed
}
site_default_case "more tasks than GPUs" -N1 -n2 --gres=gpu:1
site_default_case "-m arbitrary under -w without a host file" \
    --distribution=arbitrary -w n2,n1,n1 -n3
# One port block in the range: every step derives 24700; hold it on n1, where rank 0 runs.
use_plugin default=on port-range=24700-24703 ports=4
holder_out=$(mktemp /tmp/sddp-holder.XXXXXX)
srun_t --ddp=off -w n1 -n1 python3 -c "
import socket, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('0.0.0.0', 24700)); s.listen(); print('held', flush=True); time.sleep(30)" >"$holder_out" 2>&1 &
holder=$!
for _ in $(seq 1 100); do grep -q held "$holder_out" && break; sleep 0.2; done
site_default_case "derived port busy on the first node" -w n1 -n1
kill "$holder" 2>/dev/null || true
wait "$holder" 2>/dev/null || true
rm -f "$holder_out"
use_plugin
finish
