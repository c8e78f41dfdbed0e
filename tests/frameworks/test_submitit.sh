#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# submitit's TorchDistributedEnvironment inside a --ddp step: export() with its defaults refuses
# (the variables are set), export(overwrite=True) rewrites them with the same values, and the
# process group then meets on the step's MASTER_ADDR:MASTER_PORT; by srun and by a SlurmExecutor job.
source "$(dirname "$0")/stack_lib.sh"
VENV=$(stack_env torch)

# submitit's job environment answers only inside its own jobs, which export SUBMITIT_EXECUTOR.
out=$(SUBMITIT_EXECUTOR=slurm SRUN_TIMEOUT=150 srun_t --ddp -N2 --ntasks-per-node=2 \
    "$VENV/bin/python" "$FW_DIR/submitit_env.py" 2>&1) ||
    { fail_run "srun --ddp submitit_env.py" $? "$out"; finish; }
check_stack "submitit TorchDistributedEnvironment().export(overwrite=True) under srun --ddp" "$out" 4
expect_eq "export() with defaults refuses on every rank (MASTER_ADDR already set)" \
    "$(grep -c '^STACK .* default_export=refused ' <<<"$out")" 4
expect_eq "export(overwrite=True) leaves --ddp's MASTER_ADDR/PORT, RANK, WORLD_SIZE, LOCAL_* as they were" \
    "$(grep -c '^STACK .* changed=none ' <<<"$out")" 4

# submitit's own path: a SlurmExecutor job (sbatch, then srun in its script) given --ddp through
# srun_args; the tasks' STACK lines come back as the job's results.
tmp=$(stack_tmp)
out=$(timeout 240 "$VENV/bin/python" "$FW_DIR/submitit_executor.py" "$tmp" 2>&1) ||
    { fail_run "submitit SlurmExecutor(srun_args=['--ddp']) job" $? "$out"; tail -20 "$tmp"/*.err 2>/dev/null; }
check_stack "submitit SlurmExecutor job with srun_args=['--ddp']" "$out" 4
expect_eq "submitit job: export(overwrite=True) leaves the step's variables as they were" \
    "$(grep -c '^STACK .* changed=none ' <<<"$out")" 4
rm -rf "$tmp"
finish
