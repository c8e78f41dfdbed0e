#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The ready job scripts in sbatch/ run as shipped on the local cluster (fake GPUs: the trainer
# falls back to gloo on CPU) and train to identical weights on every rank.
source "$(dirname "$0")/lib.sh"
/usr/bin/python3 -c 'import torch.distributed' 2>/dev/null || skip "python3-torch is not installed"
dir=$(mktemp -d /tmp/sddp-jobs.XXXXXX)
trap 'rm -rf "$dir"; use_plugin' EXIT
cd "$SDDP_SOURCE_DIR"   # SLURM_SUBMIT_DIR: the scripts find examples/ from there

for script in sbatch/cpu_multinode.sbatch sbatch/gpu_single_node.sbatch sbatch/gpu_multinode.sbatch; do
    ntasks=$(awk -F'[= ]' '/^#SBATCH --nodes/{n=$NF} /^#SBATCH --ntasks-per-node/{t=$NF} END{print n*t}' "$script")
    out=$(SRUN_TIMEOUT=240 CHECKPOINT="$dir/ckpt.pt" sbatch_out "$script" 2>&1) || { fail "$script failed: $out"; continue; }
    expect_contains "$script: $ntasks ranks trained to identical weights" "$out" "OK: $ntasks ranks hold identical weights"
done
expect_contains "gpu_multinode: verbose table" "$out" "RANK  HOST"

# The native trainer's script (CPU fallback here: the C example over the same rendezvous).
if [ -x "$SDDP_BUILD_DIR/examples/c_minimal/c_minimal" ]; then
    out=$(SDDP_EXAMPLES_BIN="$SDDP_BUILD_DIR/examples" sbatch_out sbatch/cpp_trainer.sbatch 2>&1) || fail "cpp_trainer.sbatch failed: $out"
    expect_contains "cpp_trainer.sbatch: 4 ranks over the authenticated rendezvous" "$out" "hosts: 0=n1 1=n1 2=n2 3=n2"
fi
finish
