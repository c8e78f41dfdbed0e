#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# pyxis listed after slurm-ddp in plugstack.conf: pyxis's task_init then copies its container's
# environment over every variable --ddp set (the image's localhost:29500, one task's values for
# all), and the step hung until it was killed. A --ddp step in a pyxis container must instead be
# refused at its start, within seconds, with one line naming plugstack.conf and the fix; what
# did not ask for both is left alone: a container step without --ddp, a --ddp step without a
# container, and a container step that only the site default (default=on) gave DDP, which runs
# without it. Then the documented order runs the same step.
source "$(dirname "$0")/container_lib.sh"
PY=/usr/bin/python3
FIX="list spank_ddp.so after spank_pyxis.so in plugstack.conf"
# A refused step ends at once; one that slipped through hangs in init_process_group: bound it
# well below torch's own 30-minute timeout, well above a container start.
SRUN_TIMEOUT=90

use_pyxis last extra-hooks use_squashfuse=1
t=$SECONDS
out=$(csrun "$IMAGE_MASTER" --ddp -N2 --ntasks-per-node=2 "$PY" "$FW_DIR/torch_ddp.py" 2>&1) && rc=0 || rc=$?
took=$((SECONDS - t))
if [ "$rc" -eq 0 ]; then
    fail "pyxis after slurm-ddp: the --ddp step in a container ran"; tail -20 <<<"$out"
elif [ "$rc" -eq 124 ]; then
    fail "pyxis after slurm-ddp: the --ddp step hung until srun_t's ${SRUN_TIMEOUT} s limit (exit 124)"; tail -20 <<<"$out"
else
    pass "pyxis after slurm-ddp: the --ddp step was refused (srun exited $rc after $took s)"
fi
expect_contains "pyxis after slurm-ddp: the reason and the fix, naming plugstack.conf" "$out" "$FIX"
line=$(grep -m1 -F "$FIX" <<<"$out" || true)
expect_contains "pyxis after slurm-ddp: the line names pyxis's plugin file" "$line" "$PYXIS_SO"
expect_eq "pyxis after slurm-ddp: every task says so (its line names it)" \
    "$(grep -F "$FIX" <<<"$out" | grep -o '(rank [0-9]* on n[0-9]*' | sort -u | wc -l)" 4
if [ "$took" -le 30 ]; then pass "pyxis after slurm-ddp: refused within $took s"
else fail "pyxis after slurm-ddp: took $took s to end"; fi
expect_not_contains "pyxis after slurm-ddp: the trainer never started" "$out" "STACK "

# The same from a job script (#SBATCH --ddp reaches its sruns as a SPANK option variable).
cat >"$WORK/job.sh" <<JOB
#!/bin/bash
#SBATCH --ddp
srun -N2 -n2 --container-image=$IMAGE --container-mounts=$CTR_MOUNTS "$VARS" $DDP_VARS
JOB
out=$(sbatch_out -N2 -n2 "$WORK/job.sh" 2>&1) || true
expect_contains "pyxis after slurm-ddp, #SBATCH --ddp: refused with the fix" "$out" "$FIX"
expect_not_contains "pyxis after slurm-ddp, #SBATCH --ddp: no task ran" "$out" "vars "

# Steps that did not ask for both run as before in this order.
out=$(csrun "$IMAGE_MASTER" -N2 -n2 "$VARS" $DDP_VARS 2>&1) ||
    fail_run "pyxis after slurm-ddp: a container step without --ddp" $? "$out"
expect_eq "pyxis after slurm-ddp, no --ddp: runs with the image's values" \
    "$(grep -c ' MASTER_ADDR=localhost MASTER_PORT=29500 ' <<<"$out")" 2
out=$(srun_t --ddp -N2 -n2 "$VARS" $DDP_VARS 2>&1) ||
    fail_run "pyxis after slurm-ddp: a --ddp step without a container" $? "$out"
check_vars "pyxis after slurm-ddp, --ddp without a container" "$out" 2 n1
# The site default gives DDP where it can and never fails a step that did not ask.
use_plugin default=on
out=$(csrun "$IMAGE_MASTER" -N2 -n2 "$VARS" $DDP_VARS 2>&1) ||
    fail_run "pyxis after slurm-ddp, default=on: a container step that did not ask" $? "$out"
expect_eq "default=on, container step that did not ask: runs, without DDP (no SLURM_DDP_PORTS)" \
    "$(grep -c ' MASTER_ADDR=localhost MASTER_PORT=29500 SLURM_DDP_PORTS=unset ' <<<"$out")" 2
expect_not_contains "default=on, container step that did not ask: no error" "$out" "$FIX"
use_plugin

# Snippets in a plugstack.conf.d, as packages install them: Slurm reads an include glob in name
# order, so `ddp.conf` beside pyxis's `pyxis.conf` is the wrong order, `slurm-ddp.conf` the right one.
# The plugin sees what Slurm loaded, includes resolved.
snippets() {  # snippets NAME_OF_OURS: plugstack.conf = one include of a folder with both snippets
    rm -rf "$WORK/plugstack.d"
    mkdir -p "$WORK/plugstack.d"
    echo "required $PYXIS_SO runtime_path=$SDDP_CLUSTER_DIR/containers/pyxis use_squashfuse=1" >"$WORK/plugstack.d/pyxis.conf"
    echo "required $PLUGIN" >"$WORK/plugstack.d/$1"
    echo "include $WORK/plugstack.d/*.conf" >"$SDDP_CLUSTER_DIR/plugstack.conf.new"
    mv -f "$SDDP_CLUSTER_DIR/plugstack.conf.new" "$SDDP_CLUSTER_DIR/plugstack.conf"
}
snippets ddp.conf
if out=$(csrun "$IMAGE_MASTER" --ddp -N2 -n2 "$VARS" $DDP_VARS 2>&1); then
    fail "plugstack.conf.d with ddp.conf and pyxis.conf: the --ddp container step ran"
else
    expect_contains "plugstack.conf.d with ddp.conf and pyxis.conf: refused with the fix" "$out" "$FIX"
fi
snippets slurm-ddp.conf
out=$(csrun "$IMAGE_MASTER" --ddp -N2 -n2 "$VARS" $DDP_VARS 2>&1) ||
    fail_run "plugstack.conf.d with slurm-ddp.conf and pyxis.conf" $? "$out"
check_vars "plugstack.conf.d with slurm-ddp.conf and pyxis.conf (sorted after it)" "$out" 2 n1

# The documented order: the same step trains.
use_pyxis first extra-hooks use_squashfuse=1
out=$(csrun "$IMAGE_MASTER" --ddp -N2 --ntasks-per-node=2 "$PY" "$FW_DIR/torch_ddp.py" 2>&1) ||
    fail_run "pyxis before slurm-ddp: torch_ddp.py" $? "$out"
check_stack "pyxis before slurm-ddp: the same step trains" "$out" 4
finish
