#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Lightning 2.6 Trainer(strategy="ddp", num_nodes=2, devices=2, accelerator="cpu") under plain
# `srun --ddp` and from a job script with `#SBATCH --ddp`: Lightning stays on SLURMEnvironment
# (its SIGUSR1 auto-requeue handler is installed) and uses the plugin's MASTER_ADDR/MASTER_PORT.
source "$(dirname "$0")/stack_lib.sh"
source "$FW_DIR/lightning_lib.sh"
SRUN_TIMEOUT=${SRUN_TIMEOUT:-300}
VENV=$(stack_env torch)

out=$(srun_t --ddp -N2 --ntasks-per-node=2 "$VENV/bin/python" "$FW_DIR/lightning_ddp.py" 2>&1) || true
check_stack "srun --ddp python lightning_ddp.py" "$out" 4
expect_all env SLURMEnvironment "srun --ddp: Lightning chose SLURMEnvironment" "$out"
expect_all sigusr1 lightning "srun --ddp: Lightning's SLURM requeue handler owns SIGUSR1 during fit" "$out"
expect_plugin_port "srun --ddp: main_address/main_port are the step's, not 15000 + job id" "$out"

dir=$(stack_tmp)
trap 'rm -rf "$dir"; use_plugin' EXIT
cat >"$dir/lightning_job.sh" <<JOB
#!/bin/bash
#SBATCH --ddp
#SBATCH -N2 --ntasks-per-node=2
srun "$VENV/bin/python" "$FW_DIR/lightning_ddp.py"
JOB
out=$(sbatch_out "$dir/lightning_job.sh" 2>&1) || true
check_stack "#SBATCH --ddp job script, srun python lightning_ddp.py" "$out" 4
expect_all env SLURMEnvironment "#SBATCH --ddp: Lightning chose SLURMEnvironment" "$out"
expect_all sigusr1 lightning "#SBATCH --ddp: SIGUSR1 requeue handler installed" "$out"
expect_plugin_port "#SBATCH --ddp: main_address/main_port are the step's" "$out"
finish
