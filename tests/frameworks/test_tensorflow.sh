#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# TensorFlow 2.21 MultiWorkerMirroredStrategy on CPU under `srun --ddp=tf`: the strategy reads
# TF_CONFIG (one host:port per rank from the step's port block, task.index = RANK); a cross-worker
# reduce and two synchronous training steps give the right sum and identical weights on every
# worker. The worker list, as the strategy's own resolver parsed it, must name each rank's real
# host in rank order, also when ranks alternate between nodes (-m cyclic), and --ddp=tf,hostfile
# works (the host file is there for the same step).
source "$(dirname "$0")/stack_lib.sh"
ENV=$(stack_env tf)
PY="$ENV/bin/python"
TRAINER="$FW_DIR/tf_mwms.py"
SRUN_TIMEOUT=170
export TF_CPP_MIN_LOG_LEVEL=2
dir=$(stack_tmp)
trap 'rm -rf "$dir"; use_plugin' EXIT
t0=$(date +%s)

# check_tf WHAT OUTPUT WORLD MASTER: one STACK line per worker 0..WORLD-1, task.index = RANK =
# SLURM_PROCID, the right reduce on every worker, one weights digest, one worker list of WORLD
# distinct host:port entries where entry R is on the host rank R ran on, every port inside the
# step's block, and worker 0 on MASTER (= MASTER_ADDR).
check_tf() {
    local what=$1 out=$2 world=$3 master=$4 lines problems
    lines=$(grep '^STACK tf ' <<<"$out" || true)
    if [ -z "$lines" ]; then fail "$what: no STACK line in the output:"; grep -v '^[IW]0000\|WARNING' <<<"$out" | tail -30; return; fi
    problems=$(awk -v W="$world" -v M="$master" '
        { delete f
          for (i = 3; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = substr($i, length(kv[1]) + 2) }
          n++; r = f["rank"]; seen[r]++; digests[f["weights"]]++; lists[f["workers"]]++
          hostof[r] = f["host"]; workers = f["workers"]; ports = f["ports"]
          if (f["world"] != W) printf "worker %s: num_replicas_in_sync=%s, expected %s\n", r, f["world"], W
          if (r != f["slurm_procid"] || r != f["cfg_index"]) printf "worker %s: task.index=%s SLURM_PROCID=%s\n", r, f["cfg_index"], f["slurm_procid"]
          if (f["task_type"] != "worker") printf "worker %s: task type %s\n", r, f["task_type"]
          if (f["collective_ok"] != "yes") printf "worker %s: reduce gave %s, expected %s\n", r, f["reduced"], f["expected"]
          if (f["env_addr"] != M || f["addr"] != M) printf "worker %s: worker 0 at %s, MASTER_ADDR=%s, expected %s\n", r, f["addr"], f["env_addr"], M
          own[r] = f["own"] }
        END {
          if (n != W) printf "%d STACK lines, expected %d\n", n, W
          for (r = 0; r < W; r++) if (seen[r] != 1) printf "worker %d reported %d times\n", r, seen[r] + 0
          k = 0; for (d in digests) k++; if (k != 1) printf "%d different weight digests across workers\n", k
          k = 0; for (l in lists) k++; if (k != 1) printf "%d different worker lists across workers\n", k
          nw = split(workers, w, ","); split(ports, pr, "-")
          if (nw != W) printf "worker list has %d entries, expected %d: %s\n", nw, W, workers
          for (r = 0; r < nw; r++) {
            e = w[r + 1]; split(e, hp, ":"); dup[e]++
            if (hp[1] != hostof[r]) printf "worker list entry %d is %s but rank %d ran on %s\n", r, e, r, hostof[r]
            if (hp[2] + 0 < pr[1] + 0 || hp[2] + 0 > pr[2] + 0) printf "worker list entry %d port %s outside the step block %s\n", r, hp[2], ports
            if (own[r] != e) printf "worker %d serves %s, list says %s\n", r, own[r], e
          }
          for (e in dup) if (dup[e] > 1) printf "%s appears %d times in the worker list\n", e, dup[e]
        }' <<<"$lines")
    if [ -z "$problems" ]; then pass "$what: $world workers, right reduce, identical weights, TF_CONFIG workers = ranks' hosts in rank order in the step's ports"
    else fail "$what:"; echo "$problems"; echo "$lines"; fi
}

# ---- 2 nodes x 2 workers --------------------------------------------------------------------
out=$(srun_t -N2 --ntasks-per-node=2 --ddp=tf "$PY" "$TRAINER" 2>&1) || fail "srun --ddp=tf failed: $(grep -v '^[IW]0000' <<<"$out" | tail -20)"
check_tf "tf, -N2 --ntasks-per-node=2" "$out" 4 n1

# ---- tf,hostfile with ranks alternating between the nodes (-m cyclic) ------------------------
# The worker list must follow RANK (n1,n2,n1,n2), not the sorted host list.
out=$(srun_t -N2 --ntasks-per-node=2 -m cyclic --ddp=tf,hostfile "$PY" "$TRAINER" 2>&1) ||
    fail "srun --ddp=tf,hostfile -m cyclic failed: $(grep -v '^[IW]0000' <<<"$out" | tail -20)"
check_tf "tf,hostfile, -N2 --ntasks-per-node=2 -m cyclic" "$out" 4 n1
expect_eq "tf,hostfile: the worker list alternates as the ranks do" \
    "$(stack_field workers "$(grep -m1 '^STACK tf ' <<<"$out")" | sed 's/:[0-9]*//g')" "n1,n2,n1,n2"
expect_eq "tf,hostfile: every worker read the host file, rank 0's node first" \
    "$(grep '^STACK tf ' <<<"$out" | tr ' ' '\n' | grep '^hostfile_first=' | sort | uniq -c | awk '{print $1, $2}')" \
    "4 hostfile_first=n1"

# ---- GPUs bound: each worker sees only its own GPU (MultiWorkerMirroredStrategy makes every
# visible GPU a replica of the worker, so two workers of a node must not see the same ones) ---
if [ "${SDDP_CLUSTER_GPUS_PER_NODE:-0}" -ge 2 ]; then
    out=$(srun_t -N1 -n2 --gres=gpu:2 --ddp=tf bash -c 'echo "gpu $SLURM_LOCALID ${CUDA_VISIBLE_DEVICES-unset}"' 2>&1) || true
    expect_eq "tf --gres=gpu:2: one distinct GPU per worker" \
        "$(awk '$1 == "gpu" { print $3 }' <<<"$out" | sort -u | grep -c '^[0-9][0-9]*$')" 2
fi

echo "test_tensorflow: $(($(date +%s) - t0)) s"
finish
