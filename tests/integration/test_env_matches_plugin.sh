#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# `srun slurm-ddp env` prints exactly what `srun --ddp` sets, variable by variable: a GPU step
# (fake gres), a CPU step and an uneven layout, with the site's plugin arguments read from the
# cluster's plugstack.conf by the CLI. Both sides run the same layout with a fixed port (the
# derived one depends on the step id, which differs between two sruns).
source "$(dirname "$0")/lib.sh"
CLI="$SDDP_BUILD_DIR/tools/slurm-ddp"
[ -x "$CLI" ] || skip "CLI not built: $CLI"
PLUGSTACK="$SDDP_CLUSTER_DIR/plugstack.conf"
PORT=29555

# "RANK NAME=value" lines of one step's environment, without what differs from step to step
# anyway: Slurm's own SLURM_*/SLURMD_*/PMI* variables (ids, timings; ours, SLURM_DDP_*, stay),
# the secret (srun's, one per step) and the step tag (job.step: each srun here is its own job);
# the host file's path names the job too, so its job id is replaced by JOB.
task_env_lines() {
    sed -n 's/^\([0-9]*\): \([A-Za-z_][A-Za-z0-9_]*=\)/\1 \2/p' |
        awk '$2 ~ /^SLURM_DDP_/ || $2 !~ /^(SLURM_|SLURMD_|PMI)/' |
        grep -Ev '^[0-9]+ SLURM_DDP_(SECRET|STEP)=' |
        sed -E 's/^([0-9]+ SLURM_DDP_HOSTFILE=.*hostfile\.[0-9]+)\.[0-9]+\./\1.JOB./' | sort -u
}

# compare NAME SITE_ARGS -- SRUN_ARGS...
compare() {
    local name=$1 site=$2; shift 3
    use_plugin $site
    local plain with_ddp from_cli set_by_plugin steps
    plain=$(srun_t -l "$@" env | task_env_lines)
    with_ddp=$(srun_t -l --ddp=port=$PORT "$@" env | task_env_lines)
    # What the plugin set: every line of the --ddp step that the plain step does not have.
    set_by_plugin=$(comm -13 <(echo "$plain") <(echo "$with_ddp"))
    from_cli=$(srun_t -l "$@" "$CLI" env --options=port=$PORT --plugstack="$PLUGSTACK" | task_env_lines)
    # Equal both ways: every line the CLI prints is in the --ddp task (a value the plugin sets to
    # what Slurm already had counts, so this side compares with the whole environment), and
    # every line the plugin changed is printed by the CLI.
    local cli_only plugin_only
    cli_only=$(comm -23 <(echo "$from_cli") <(echo "$with_ddp"))
    plugin_only=$(comm -13 <(echo "$from_cli") <(echo "$set_by_plugin"))
    if [ -n "$from_cli" ] && [ -z "$cli_only" ] && [ -z "$plugin_only" ]; then
        pass "$name: CLI and plugin agree on $(wc -l <<<"$from_cli") task variables"
    else
        fail "$name: CLI and plugin disagree"
        [ -z "$cli_only" ] || { echo "printed by the CLI, not in the --ddp task:"; head -20 <<<"$cli_only"; }
        [ -z "$plugin_only" ] || { echo "set by the plugin, not printed by the CLI:"; head -20 <<<"$plugin_only"; }
    fi
    steps=$(srun_t -l "$@" "$CLI" env --plugstack="$PLUGSTACK" | grep -cE '^[0-9]+: SLURM_DDP_STEP=[0-9]+\.[0-9]+$' || true)
    expect_eq "$name: every task's step tag is job.step" "$steps" "$(awk '{print $1}' <<<"$from_cli" | sort -u | wc -l)"
}

compare "GPU step, site gpu-bind=single" "gpu-bind=single" -- -N2 --ntasks-per-node=2 --gres=gpu:2
compare "GPU step, site defaults" "" -- -N2 --ntasks-per-node=2 --gres=gpu:2
compare "CPU step" "" -- -N2 -n4
compare "uneven layout -n5 -N2" "nccl-hints" -- -N2 -n5
compare "framework options jax, hostfile" "jax hostfile" -- -N2 -n3
compare "framework option tf, GPU step" "tf" -- -N2 --ntasks-per-node=2 --gres=gpu:2

# Site arguments matter: with gpu-bind=single the CLI must show one visible GPU per task.
use_plugin gpu-bind=single
single=$(srun_t -l -N1 -n2 --gres=gpu:2 "$CLI" env --plugstack="$PLUGSTACK" | grep -c 'CUDA_VISIBLE_DEVICES=[0-9]$' || true)
expect_eq "site gpu-bind=single reaches the CLI" "$single" 2
use_plugin
rc=0; msg=$("$CLI" env --plugstack=/nonexistent/plugstack.conf 2>&1) || rc=$?
expect_eq "unreadable --plugstack exits 1" "$rc" 1
expect_contains "unreadable --plugstack is named" "$msg" "/nonexistent/plugstack.conf"
finish
