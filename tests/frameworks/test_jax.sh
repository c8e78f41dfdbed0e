#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# JAX 0.12 multi-process on CPU under `srun --ddp=jax`: jax.distributed.initialize() with no
# arguments takes the coordinator from JAX_COORDINATOR_ADDRESS (rank 0's host, a port of the
# step's block) and the process count/id from its own Slurm detection; a cross-process all-gather
# and psum give the right value on every process. Also: rank 0 not on the first node (JAX's own
# detection would wait on the first node), two JAX steps at once in one job (JAX's own detection
# gives both SLURM_JOB_ID % 4096 + 61440), and --ddp=jax,launcher refused.
source "$(dirname "$0")/stack_lib.sh"
ENV=$(stack_env jax)
PY="$ENV/bin/python"
TRAINER="$FW_DIR/jax_collective.py"
SRUN_TIMEOUT=150
export JAX_PLATFORMS=cpu
# A failed JAX rendezvous aborts (absl CHECK) with a ~200 MB core in the working directory; srun
# propagates this limit to the tasks.
ulimit -c 0
dir=$(stack_tmp)
job_name="sddp-stack-jax-$$"
# sbatch_out's timeout ends only the waiting sbatch: cancel the job too, or its JAX processes
# would wait for their peers for up to 300 s on the shared cluster.
trap 'scancel --name="$job_name" 2>/dev/null || true; rm -rf "$dir"; use_plugin' EXIT
t0=$(date +%s)

# check_jax WHAT OUTPUT WORLD MASTER: one STACK line per process 0..WORLD-1 with JAX's own
# process id = SLURM_PROCID, the right collective sum, one result digest, and a coordinator JAX
# really used that is the exported JAX_COORDINATOR_ADDRESS: MASTER on a port of the step's block,
# not the port JAX derives from the job id.
check_jax() {
    local what=$1 out=$2 world=$3 master=$4 lines problems
    lines=$(grep '^STACK jax ' <<<"$out" || true)
    if [ -z "$lines" ]; then fail "$what: no STACK line in the output:"; tail -30 <<<"$out"; return; fi
    problems=$(awk -v W="$world" -v M="$master" '
        { for (i = 3; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = substr($i, length(kv[1]) + 2) }
          n++; seen[f["rank"]]++; digests[f["weights"]]++; r = f["rank"]
          if (f["world"] != W) printf "process %s: num_processes=%s, expected %s\n", r, f["world"], W
          if (r != f["slurm_procid"]) printf "process %s: JAX process_id differs from SLURM_PROCID=%s\n", r, f["slurm_procid"]
          if (f["collective_ok"] != "yes") printf "process %s: all-gather sum %s, psum %s, expected %s\n", r, f["gather_sum"], f["psum"], f["expected"]
          if (f["addr"] ":" f["port"] != f["jax_coord_env"]) printf "process %s: JAX used %s:%s, JAX_COORDINATOR_ADDRESS=%s\n", r, f["addr"], f["port"], f["jax_coord_env"]
          if (f["addr"] != M) printf "process %s: coordinator host %s, expected rank 0 host %s\n", r, f["addr"], M
          if (f["env_addr"] != M) printf "process %s: MASTER_ADDR=%s, expected %s (a torch part of the program needs it too)\n", r, f["env_addr"], M
          if (r == 0 && f["host"] != M) printf "process 0 ran on %s, expected %s\n", f["host"], M
          split(f["ports"], pr, "-")
          if (f["ports"] == "-" || f["port"] + 0 < pr[1] + 0 || f["port"] + 0 > pr[2] + 0) printf "process %s: coordinator port %s outside the step block %s\n", r, f["port"], f["ports"]
          if (f["port"] == f["jax_own_port"]) printf "process %s: coordinator port %s is JAX'"'"'s own job-derived port\n", r, f["port"]
          if (f["jax_nproc_env"] != W || f["jax_pid_env"] != r) printf "process %s: JAX_NUM_PROCESSES=%s JAX_PROCESS_ID=%s\n", r, f["jax_nproc_env"], f["jax_pid_env"]
          coord[f["addr"] ":" f["port"]]++ }
        END {
          if (n != W) printf "%d STACK lines, expected %d\n", n, W
          for (r = 0; r < W; r++) if (seen[r] != 1) printf "process %d reported %d times\n", r, seen[r] + 0
          k = 0; for (d in digests) k++; if (k != 1) printf "%d different results across processes\n", k
          k = 0; for (c in coord) k++; if (k != 1) printf "%d different coordinators across processes\n", k
        }' <<<"$lines")
    if [ -z "$problems" ]; then pass "$what: $world processes, right all-gather and psum, coordinator from --ddp=jax at $master"
    else fail "$what:"; echo "$problems"; echo "$lines"; fi
}
coordinator_of() { local l; l=$(grep -m1 '^STACK jax ' <<<"$1" || true); echo "$(stack_field addr "$l"):$(stack_field port "$l")"; }

# ---- 2 nodes x 2 processes, initialize() with no arguments ----------------------------------
out=$(srun_t -N2 --ntasks-per-node=2 --ddp=jax "$PY" "$TRAINER" 2>&1) || fail "srun --ddp=jax failed: $(tail -20 <<<"$out")"
check_jax "jax, -N2 --ntasks-per-node=2" "$out" 4 n1

# ---- rank 0 on the second node of the list (arbitrary distribution) -------------------------
# JAX's own detection takes the first host of SLURM_STEP_NODELIST (n1), where no coordinator runs.
printf 'n2\nn1\nn2\n' >"$dir/hosts"
out=$(SLURM_HOSTFILE="$dir/hosts" srun_t -n3 --distribution=arbitrary --ddp=jax "$PY" "$TRAINER" 2>&1) ||
    fail "srun --ddp=jax --distribution=arbitrary failed: $(tail -20 <<<"$out")"
check_jax "jax, rank 0 on n2 (arbitrary)" "$out" 3 n2

# ---- two JAX steps at once in one job -------------------------------------------------------
mkdir "$dir/overlap"
cat >"$dir/two_steps.sh" <<EOS
#!/bin/bash
export STACK_OVERLAP_DIR=$dir/overlap STACK_OVERLAP_COUNT=4
srun -N2 -n2 --ntasks-per-node=1 --exact --ddp=jax "$PY" "$TRAINER" >"$dir/step_a" 2>&1 &
srun -N2 -n2 --ntasks-per-node=1 --exact --ddp=jax "$PY" "$TRAINER" >"$dir/step_b" 2>&1 &
wait
EOS
sbatch_out -N2 --ntasks-per-node=2 --job-name="$job_name" "$dir/two_steps.sh" >/dev/null || fail "two-step job failed"
a=$(cat "$dir/step_a" 2>/dev/null || true) b=$(cat "$dir/step_b" 2>/dev/null || true)
check_jax "jax, first of two concurrent steps" "$a" 2 n1
check_jax "jax, second of two concurrent steps" "$b" 2 n1
expect_eq "jax: both steps' coordinators were up at the same time" \
    "$(grep -h '^STACK jax ' <<<"$a"$'\n'"$b" | grep -c ' overlap=yes')" 4
ca=$(coordinator_of "$a") cb=$(coordinator_of "$b")
if [ "$ca" != "$cb" ] && [ "$ca" != ":" ]; then pass "jax: concurrent steps use different coordinators ($ca, $cb)"
else fail "jax: concurrent steps share the coordinator '$ca'"; fi

# ---- GPUs bound: JAX_LOCAL_DEVICE_IDS indexes the task's own GPU inside CUDA_VISIBLE_DEVICES -----
# (JAX's own default, [SLURM_LOCALID], names a device the task cannot see once Slurm narrows it.)
if [ "${SDDP_CLUSTER_GPUS_PER_NODE:-0}" -ge 2 ]; then
    for bind in "--gres=gpu:2" "--gpus-per-task=1"; do
        out=$(srun_t -N1 -n2 $bind --ddp=jax bash -c 'echo "gpu $SLURM_LOCALID ${CUDA_VISIBLE_DEVICES-unset} ${SLURM_DDP_DEVICE-unset} ${JAX_LOCAL_DEVICE_IDS-unset}"' 2>&1) || true
        problems=$(awk '$1 == "gpu" { n++; k = split($3, v, ",")
                   if ($5 != $4) printf "task %s: JAX_LOCAL_DEVICE_IDS=%s, SLURM_DDP_DEVICE=%s\n", $2, $5, $4
                   if ($5 !~ /^[0-9]+$/ || $5 + 0 >= k) printf "task %s: JAX_LOCAL_DEVICE_IDS=%s outside CUDA_VISIBLE_DEVICES=%s\n", $2, $5, $3 }
                   END { if (n != 2) printf "%d task lines, expected 2\n", n }' <<<"$out")
        if [ -z "$problems" ]; then pass "jax $bind: JAX_LOCAL_DEVICE_IDS is each task's own visible GPU"
        else fail "jax $bind:"; echo "$problems"; echo "$out"; fi
    done
fi

# ---- combinations ---------------------------------------------------------------------------
# Under launcher JAX's Slurm detection would count nodes, not processes: srun must refuse it.
if out=$(srun_t -N1 -n1 --ddp=jax,launcher true 2>&1); then
    fail "--ddp=jax,launcher was accepted"
else
    expect_contains "jax,launcher refused by srun, naming jax" "$out" "jax"
    expect_contains "jax,launcher refused by srun, naming launcher" "$out" "launcher"
    expect_not_contains "jax,launcher refused as a combination, not as an unknown key" "$out" "unknown key"
fi

echo "test_jax: $(($(date +%s) - t0)) s"
finish
