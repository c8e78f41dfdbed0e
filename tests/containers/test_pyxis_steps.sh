#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# A job script with `#SBATCH --ddp` runs two 2-node steps side by side, each in its own pyxis
# container, the second with its rank 0 on n2 (-m arbitrary, SLURM_HOSTFILE). enroot's
# 50-slurm-pytorch.sh hook gives every step of a job one port (61000 + job id % 4536) and the
# step's first host in node-name order: without --ddp both steps get the same MASTER_ADDR and
# MASTER_PORT, the second's pointing at a node where its rank 0 is not. With --ddp each step has
# its own MASTER_ADDR (the host of its rank 0) and its own ports, and both train.
source "$(dirname "$0")/container_lib.sh"
PY=/usr/bin/python3
use_pyxis first extra-hooks use_squashfuse=1
# Rank 0 of step b on n2. The plugin reads the file in task_init, which pyxis (listed first) has
# already moved into the container: it must be there too (WORK is mounted in every container).
printf 'n2\nn1\n' >"$WORK/n2-first"

# two_steps DDP PROGRAM...: a job script whose steps a and b run PROGRAM at once, each writing
# its own output file in WORK.
two_steps() {
    local ddp=$1
    shift
    cat <<JOB
#!/bin/bash
${ddp:+#SBATCH --ddp}
#SBATCH -N2 --ntasks-per-node=2
steps=(-N2 -n2 --ntasks-per-node=1 --exact --container-image=$IMAGE --container-mounts=$CTR_MOUNTS)
srun "\${steps[@]}" $* >"$WORK/a.\$SLURM_JOB_ID" 2>&1 &
SLURM_HOSTFILE=$WORK/n2-first srun "\${steps[@]}" -m arbitrary $* >"$WORK/b.\$SLURM_JOB_ID" 2>&1 &
wait
echo "job \$SLURM_JOB_ID done"
JOB
}
# run_job NAME DDP PROGRAM...: sets $a and $b, the two steps' outputs.
run_job() {
    local name=$1 job
    shift
    two_steps "$@" >"$WORK/$name.sh"
    out=$(SRUN_TIMEOUT=300 sbatch_out "$WORK/$name.sh" 2>&1) || true
    job=$(sed -n 's/^job \([0-9]*\) done$/\1/p' <<<"$out")
    [ -n "$job" ] || { fail "$name: the job did not finish: $(tail -5 <<<"$out")"; return 1; }
    a=$(cat "$WORK/a.$job") b=$(cat "$WORK/b.$job")
}

if run_job hook "" "$VARS" $DDP_VARS SLURM_JOB_ID; then
    hook_port=$((61000 + $(var_of SLURM_JOB_ID 0 "$a") % 4536))
    expect_eq "without --ddp, step a: the hook's n1:$hook_port" \
        "$(var_of MASTER_ADDR 0 "$a"):$(var_of MASTER_PORT 0 "$a")" "n1:$hook_port"
    expect_eq "without --ddp, step b (rank 0 on n2): the hook's n1 and the same port" \
        "$(var_of MASTER_ADDR 0 "$b"):$(var_of MASTER_PORT 0 "$b")" "n1:$hook_port"
fi

if run_job vars ddp "$VARS" $DDP_VARS; then
    check_vars "#SBATCH --ddp, step a" "$a" 2 n1
    check_vars "#SBATCH --ddp, step b (rank 0 on n2)" "$b" 2 n2
    pa=$(var_of SLURM_DDP_PORTS 0 "$a") pb=$(var_of SLURM_DDP_PORTS 0 "$b")
    if [ -n "$pa" ] && [ -n "$pb" ] && [ "$pa" != "$pb" ]; then
        pass "#SBATCH --ddp: each step its own block of ports ($pa, $pb)"
    else
        fail "#SBATCH --ddp: the steps' port blocks: '$pa' and '$pb'"
    fi
fi

if run_job train ddp "$PY" "$FW_DIR/torch_ddp.py"; then
    check_stack "#SBATCH --ddp, step a trains in its container" "$a" 2 n1
    check_stack "#SBATCH --ddp, step b trains in its container, meeting on n2" "$b" 2 n2
    pa=$(stack_field port "$(grep -m1 '^STACK ' <<<"$a" || true)")
    pb=$(stack_field port "$(grep -m1 '^STACK ' <<<"$b" || true)")
    if [ -n "$pa" ] && [ -n "$pb" ] && [ "$pa" != "$pb" ]; then pass "the two steps met on different ports ($pa, $pb)"
    else fail "the two steps' rendezvous ports: '$pa' and '$pb'"; fi
fi

# The same host file where only the host can read it: the plugin, inside the container, cannot.
outside_only=$(mktemp "$SDDP_WORK_ROOT/sddp-ctr-hosts.XXXXXX")
printf 'n2\nn1\n' >"$outside_only"
if out=$(SLURM_HOSTFILE=$outside_only csrun "$IMAGE" --ddp -N2 -n2 -m arbitrary "$VARS" $DDP_VARS 2>&1); then
    fail "-m arbitrary, host file outside the container: the step ran"
else
    expect_contains "-m arbitrary, host file outside the container: refused, naming it" "$out" \
        "SLURM_HOSTFILE='$outside_only', which cannot be opened (No such file or directory)"
fi
rm -f "$outside_only"
finish
