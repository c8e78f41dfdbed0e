#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Two Lightning steps at once in one allocation (2 nodes x 2 tasks, each step 2 nodes x 1 task):
# without a per-step port both would take 15000 + the job id's last four digits and collide; with
# `--ddp` each step has its own block, so both finish, on different ports.
source "$(dirname "$0")/stack_lib.sh"
source "$FW_DIR/lightning_lib.sh"
SRUN_TIMEOUT=${SRUN_TIMEOUT:-360}
VENV=$(stack_env torch)

dir=$(stack_tmp)
trap 'rm -rf "$dir"; use_plugin' EXIT
cat >"$dir/two_steps.sh" <<JOB
#!/bin/bash
#SBATCH --ddp
#SBATCH -N2 --ntasks-per-node=2
for name in lightning_a lightning_b; do
    srun -N2 -n2 --ntasks-per-node=1 --exact "$VENV/bin/python" "$FW_DIR/lightning_ddp.py" \\
        --devices 1 --name \$name &
done
wait
JOB
out=$(sbatch_out "$dir/two_steps.sh" 2>&1) || true
grep -q '^STACK ' <<<"$out" || { echo "job output:"; tail -30 <<<"$out"; }
check_stack "step A of two concurrent Lightning steps" "$(grep '^STACK lightning_a ' <<<"$out" || true)" 2
check_stack "step B of two concurrent Lightning steps" "$(grep '^STACK lightning_b ' <<<"$out" || true)" 2
expect_all env SLURMEnvironment "both steps on SLURMEnvironment" "$out"
expect_plugin_port "both steps on their own step's port, not 15000 + job id" "$out"
pa=$(stack_field port "$(grep -m1 '^STACK lightning_a ' <<<"$out" || true)")
pb=$(stack_field port "$(grep -m1 '^STACK lightning_b ' <<<"$out" || true)")
if [ -n "$pa" ] && [ -n "$pb" ] && [ "$pa" != "$pb" ]; then pass "the two steps met on different ports ($pa, $pb)"
else fail "the two steps' ports: '$pa' and '$pb'"; fi
finish
