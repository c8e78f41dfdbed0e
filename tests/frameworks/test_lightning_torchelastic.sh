#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Lightning under `srun --ddp=torchelastic`: TORCHELASTIC_RUN_ID makes Lightning pick
# TorchElasticEnvironment, which trains on the step's address and port but loses the SLURM
# auto-requeue: no SIGUSR1 handler is installed. This pins what that mode keeps and loses.
source "$(dirname "$0")/stack_lib.sh"
source "$FW_DIR/lightning_lib.sh"
SRUN_TIMEOUT=${SRUN_TIMEOUT:-300}
VENV=$(stack_env torch)

out=$(srun_t --ddp=torchelastic -N2 --ntasks-per-node=2 "$VENV/bin/python" "$FW_DIR/lightning_ddp.py" 2>&1) || true
check_stack "srun --ddp=torchelastic python lightning_ddp.py" "$out" 4
expect_all env TorchElasticEnvironment "torchelastic: Lightning chose TorchElasticEnvironment" "$out"
expect_all sigusr1 SIG_DFL "torchelastic: no SIGUSR1 requeue handler (auto-requeue lost)" "$out"
expect_plugin_port "torchelastic: main_address/main_port are the step's" "$out"
finish
