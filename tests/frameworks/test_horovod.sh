#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Horovod 0.28.1 (built against Debian's torch 1.13, scripts/framework-env.sh horovod) as users ran
# it under mpirun, now under `srun --ddp --mpi=pmix`, 2 nodes x 2 ranks: Horovod's ranks are
# --ddp's (RANK, LOCAL_RANK, LOCAL_WORLD_SIZE), every rank ends with the same weights, and with
# fake gres GPUs each rank's SLURM_DDP_DEVICE is its Horovod local rank, on a GPU of its own.
source "$(dirname "$0")/stack_lib.sh"
SRUN_TIMEOUT=${SRUN_TIMEOUT:-300}
srun --mpi=list 2>&1 | grep -qw pmix || skip "this Slurm has no mpi/pmix plugin (srun --mpi=list)"
VENV=$(stack_env horovod)

# check_hvd WHAT OUTPUT [gpus]: one line per rank 0..3, one digest, MPI as the controller, and
# Horovod's rank, local rank and local size equal to --ddp's; with gpus, the binding too.
check_hvd() {
    local lines problems
    lines=$(grep '^STACK horovod ' <<<"$2" || true)
    problems=$(awk -v G="${3:-}" '
        { for (i = 3; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = substr($i, length(kv[1]) + 2) }
          n++; seen[f["rank"]]++; d[f["weights"]]++
          if (f["world"] != 4) printf "rank %s: hvd.size()=%s\n", f["rank"], f["world"]
          if (f["addr"] != "mpi") printf "rank %s: controller %s, expected mpi\n", f["rank"], f["addr"]
          if (f["env_rank"] != f["rank"]) printf "rank %s: RANK=%s\n", f["rank"], f["env_rank"]
          if (f["env_local_rank"] != f["hvd_local_rank"]) printf "rank %s: LOCAL_RANK=%s, hvd.local_rank()=%s\n", f["rank"], f["env_local_rank"], f["hvd_local_rank"]
          if (f["env_local_size"] != f["hvd_local_size"]) printf "rank %s: LOCAL_WORLD_SIZE=%s, hvd.local_size()=%s\n", f["rank"], f["env_local_size"], f["hvd_local_size"]
          if (G != "") {
              k = split(f["cvd"], v, ",")
              if (k != 2) printf "rank %s: CUDA_VISIBLE_DEVICES=%s, expected the node'"'"'s 2 GPUs\n", f["rank"], f["cvd"]
              if (f["device"] != f["hvd_local_rank"]) printf "rank %s: SLURM_DDP_DEVICE=%s, hvd.local_rank()=%s\n", f["rank"], f["device"], f["hvd_local_rank"]
              own = f["host"] ":" v[f["device"] + 1]
              if (own in gpu) printf "ranks %s and %s share GPU %s\n", gpu[own], f["rank"], own
              gpu[own] = f["rank"] } }
        END { if (n != 4) printf "%d STACK lines, expected 4\n", n
              for (r = 0; r < 4; r++) if (seen[r] != 1) printf "rank %d reported %d times\n", r, seen[r] + 0
              k = 0; for (x in d) k++; if (k != 1) printf "%d weight digests\n", k }' <<<"$lines")
    if [ -n "$lines" ] && [ -z "$problems" ]; then pass "$1"
    else fail "$1:"; echo "$problems"; tail -30 <<<"$2"; fi
}

out=$(srun_t --ddp --mpi=pmix -N2 --ntasks-per-node=2 "$VENV/bin/python" "$FW_DIR/train_hvd.py" 2>&1) || true
check_hvd "Horovod over MPI under srun --ddp --mpi=pmix: 4 ranks, identical weights, Horovod's ranks are --ddp's" "$out"

if [ "${SDDP_CLUSTER_GPUS_PER_NODE:-0}" -ge 2 ]; then
    out=$(srun_t --ddp --mpi=pmix -N2 --ntasks-per-node=2 --gres=gpu:2 "$VENV/bin/python" \
        "$FW_DIR/train_hvd.py" 2>&1) || true
    check_hvd "Horovod with fake gres GPUs: each rank's SLURM_DDP_DEVICE is its Horovod local rank" "$out" gpus
fi
finish
