#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Smoke test of the local test cluster (tests/cluster/cluster.sh): before any --ddp test can
# mean anything, plain Slurm must work across nodes: srun, sbatch --wait, TCP between tasks on
# different nodes (PyTorch gloo), PMI2/PMIx, and the fake GPUs.
#
# Needs a running cluster (the ctest fixture `cluster_up` starts it). Exit 77 = skipped.
set -euo pipefail

DIR=${SDDP_CLUSTER_DIR:-/tmp/slurm-ddp-cluster}
if [[ ! -r $DIR/env.sh ]]; then
  echo "SKIP: no cluster at $DIR (run tests/cluster/cluster.sh up)"
  exit 77
fi
# shellcheck source=/dev/null
source "$DIR/env.sh"
((SDDP_CLUSTER_NODES >= 2)) || {
  echo "SKIP: needs 2 nodes, the cluster has $SDDP_CLUSTER_NODES"
  exit 77
}

work=$(mktemp -d /tmp/sddp-smoke.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
t_prev=$(date +%s.%N)
# Each step line also says how long the previous step took: slow clusters show up in the log.
step() {
  local t
  t=$(date +%s.%N)
  printf '== (%.1f s) %s\n' "$(awk -v a="$t_prev" -v b="$t" 'BEGIN { print b - a }')" "$*"
  t_prev=$t
}
# Every Slurm command is bounded: a hung step must fail the test, not the ctest TIMEOUT.
run() { timeout "${T:-60}" "$@"; }

step "srun -N2 -n4 hostname"
out=$(run srun -N2 -n4 hostname)
[[ $(wc -l <<<"$out") -eq 4 ]] || fail "expected 4 lines, got: $out"
[[ $(sort -u <<<"$out" | tr '\n' ' ') == "n1 n2 " ]] || fail "expected n1 and n2, got: $out"

step "sbatch --wait, 2 nodes"
cat >"$work/job.sh" <<'EOF'
#!/bin/bash
#SBATCH -N2 -n2 -t 2
echo "batch on $(hostname) job $SLURM_JOB_ID nodes $SLURM_JOB_NODELIST"
srun hostname | sort
EOF
run sbatch --wait --quiet -o "$work/out.%j" -D "$work" "$work/job.sh" || fail "sbatch --wait failed"
outfile=$(ls "$work"/out.*)
cat "$outfile"
grep -q '^batch on n1 job [0-9]* nodes n\[1-2\]$' "$outfile" || fail "unexpected batch header"
[[ $(tail -n 2 "$outfile" | tr '\n' ' ') == "n1 n2 " ]] || fail "srun in batch did not run on n1 n2"

step "PMI2 and PMIx across 2 nodes"
# shellcheck disable=SC2016 # expanded by the task's shell
out=$(run srun -N2 -n2 --mpi=pmi2 sh -c 'echo "$PMI_RANK:$PMI_SIZE:${PMI_FD:+fd}"' | sort)
[[ $(tr '\n' ' ' <<<"$out") == "0:2:fd 1:2:fd " ]] || fail "pmi2 environment: $out"
# shellcheck disable=SC2016 # expanded by the task's shell
out=$(run srun -N2 -n2 --mpi=pmix sh -c 'echo "$PMIX_RANK"' | sort)
[[ $(tr '\n' ' ' <<<"$out") == "0 1 " ]] || fail "pmix environment: $out"

step "PyTorch gloo all-reduce across 2 nodes (MASTER_ADDR=n1)"
if ! /usr/bin/python3 -c 'import torch.distributed' 2>/dev/null; then
  echo "  (skipped: /usr/bin/python3 has no torch; run tests/cluster/install-deps.sh)"
else
  cat >"$work/allreduce.py" <<'EOF'
import os, torch, torch.distributed as dist
rank, world = int(os.environ["SLURM_PROCID"]), int(os.environ["SLURM_NTASKS"])
dist.init_process_group("gloo", init_method="env://", rank=rank, world_size=world)
t = torch.tensor([float(rank + 1)])
dist.all_reduce(t)
print(f"rank {rank}/{world} on {os.uname().nodename}: sum={t.item():g}", flush=True)
dist.destroy_process_group()
EOF
  port=$((20000 + RANDOM % 20000))
  out=$(MASTER_ADDR=n1 MASTER_PORT=$port T=120 run srun -N2 -n2 -w n1,n2 --ntasks-per-node=1 \
    /usr/bin/python3 "$work/allreduce.py" | sort)
  echo "$out"
  [[ $out == "rank 0/2 on n1: sum=3"$'\n'"rank 1/2 on n2: sum=3" ]] || fail "all-reduce: $out"
fi

if ((SDDP_CLUSTER_GPUS_PER_NODE >= 2)); then
  step "fake GPUs: srun --gres=gpu:2 -N1"
  out=$(run srun --gres=gpu:2 -N1 env)
  grep -x 'CUDA_VISIBLE_DEVICES=0,1' <<<"$out" || fail "CUDA_VISIBLE_DEVICES: $(grep CUDA <<<"$out")"
fi

step "PASS"
