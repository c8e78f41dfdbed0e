#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Hugging Face Transformers Trainer under plain `srun --ddp`: no launcher, no arguments; the
# Trainer's own view of the world (TrainingArguments.world_size / process_index) must be the step's.
source "$(dirname "$0")/stack_lib.sh"
VENV=$(stack_env torch)

out=$(SRUN_TIMEOUT=170 srun_t --ddp -N2 --ntasks-per-node=2 "$VENV/bin/python" "$FW_DIR/hf_trainer.py" 2>&1) ||
    { fail_run "srun --ddp hf_trainer.py" $? "$out"; finish; }
check_stack "Transformers Trainer under srun --ddp" "$out" 4

# What the Trainer itself believes, beside what the process group says.
bad=$(awk '/^STACK / { for (i = 3; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
        if (f["trainer_world"] != 4 || f["trainer_rank"] != f["rank"] || f["env_rank"] != f["rank"] || f["steps"] != 3 || f["backend"] != "gloo")
            print }' <<<"$out")
if [ -z "$bad" ]; then pass "TrainingArguments: world_size 4, process_index = RANK, 3 steps on gloo"
else fail "Trainer's view of the world differs from the step's:"; echo "$bad"; fi
finish
