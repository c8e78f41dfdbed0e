#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# DeepSpeed on CPU under --ddp: `deepspeed.init_distributed()` + `deepspeed.initialize()` run by
# plain `srun --ddp` (ZeRO 0 with the accelerator's backend, ZeRO 1 with dist_backend="gloo"), then
# the `deepspeed` launcher, one per node, under `--ddp=launcher` with --no_ssh.
source "$(dirname "$0")/stack_lib.sh"
VENV=$(stack_env torch)
export DS_ACCELERATOR=cpu
TRAIN="$FW_DIR/deepspeed_train.py"

# DeepSpeed's CPU backend compiles its shared-memory collective op (a torch C++ extension, cached
# in TORCH_EXTENSIONS_DIR, default ~/.cache/torch_extensions) the first time a process group
# starts. Build it once here, so four ranks do not wait on one compiler inside the bounded step.
t0=$SECONDS
timeout 900 "$VENV/bin/python" -c 'from deepspeed.accelerator import get_accelerator as g; g().create_op_builder("ShareMemCommBuilder").load()' >/dev/null 2>&1 ||
    { fail "building DeepSpeed's CPU shm comm op failed"; finish; }
echo "deepspeed shm comm op ready in $((SECONDS - t0)) s"

out=$(SRUN_TIMEOUT=170 srun_t --ddp -N2 --ntasks-per-node=2 "$VENV/bin/python" "$TRAIN" --stage 0 --name ds-zero0 2>&1) ||
    { fail_run "srun --ddp deepspeed_train.py --stage 0" $? "$out"; }
check_stack "DeepSpeed init_distributed()+initialize() ZeRO 0 under srun --ddp" "$out" 4
expect_eq "ZeRO 0: CPU accelerator, gloo (no oneCCL), 3 steps, on every rank" \
    "$(grep '^STACK ' <<<"$out" | grep -c ' accelerator=cpu backend=gloo zero=0 steps=3 ')" 4

out=$(SRUN_TIMEOUT=170 srun_t --ddp -N2 --ntasks-per-node=2 "$VENV/bin/python" "$TRAIN" --stage 1 --backend gloo --name ds-zero1 2>&1) ||
    { fail_run "srun --ddp deepspeed_train.py --stage 1 --backend gloo" $? "$out"; }
check_stack "DeepSpeed init_distributed(dist_backend=gloo), ZeRO 1 under srun --ddp" "$out" 4
expect_eq "ZeRO 1: 3 steps on every rank" "$(grep '^STACK ' <<<"$out" | grep -c ' backend=gloo zero=1 steps=3 ')" 4

# The deepspeed launcher: one task per node, two workers each, no ssh. It needs a host file whose
# order matches --node_rank (rank 0's node first): --ddp=hostfile writes it on each node and
# exports its path. The launcher task also copies it out, so the test can read what it was given.
tmp=$(stack_tmp)
# shellcheck disable=SC2016
script='cp "$SLURM_DDP_HOSTFILE" "$HOSTS_DIR/hosts.$SLURM_NODEID"
exec "$VENV/bin/deepspeed" --no_ssh --hostfile "$SLURM_DDP_HOSTFILE" --node_rank "$PET_NODE_RANK" \
    --master_addr "$PET_MASTER_ADDR" --master_port "$PET_MASTER_PORT" "$TRAIN" --name ds-launcher'
out=$(HOSTS_DIR=$tmp VENV=$VENV TRAIN=$TRAIN SRUN_TIMEOUT=170 \
    srun_t --ddp=launcher,hostfile,nproc=2 -N2 -n2 --ntasks-per-node=1 bash -c "$script" 2>&1) ||
    { fail_run "srun --ddp=launcher,hostfile deepspeed --no_ssh" $? "$out"; }
check_stack "deepspeed launcher per node (--no_ssh) under srun --ddp=launcher,hostfile,nproc=2" "$out" 4
expect_eq "--ddp=hostfile gave the launcher rank 0's node first, nproc slots" \
    "$(cat "$tmp/hosts.0" "$tmp/hosts.1" 2>/dev/null | tr '\n' ' ')" "n1 slots=2 n2 slots=2 n1 slots=2 n2 slots=2 "
rm -rf "$tmp"
finish
