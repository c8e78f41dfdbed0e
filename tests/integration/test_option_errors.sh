#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Bad --ddp values are refused by srun and sbatch before anything runs, with the plugin's message.
source "$(dirname "$0")/lib.sh"

mark_dir=$(mktemp -d /tmp/sddp-option-errors.XXXXXX)
trap 'rm -rf "$mark_dir"; use_plugin' EXIT
# Runs only if a task starts: leaves a file (the nodes share /tmp) and prints a marker.
program="touch $mark_dir/ran; echo RAN-THE-PROGRAM"

# The controller's count of submitted jobs: a launch refused in srun/sbatch never reaches it.
jobs_submitted() { sdiag | awk -F: '/^[[:space:]]*Jobs submitted/ { gsub(/ /, "", $2); print $2; exit }'; }

refused() {  # refused WHAT NEEDLE CMD...
    local what=$1 needle=$2 out rc=0 before after
    shift 2
    rm -f "$mark_dir/ran"
    before=$(jobs_submitted)
    out=$(timeout "$SRUN_TIMEOUT" "$@" 2>&1) || rc=$?
    after=$(jobs_submitted)
    case $rc in
        0) fail "$what: accepted ($*)"; return ;;
        124 | 137) fail "$what: timed out after ${SRUN_TIMEOUT}s ($*)"; return ;;
    esac
    # The plugin's own words, not srun's "unrecognized option" (plugin not loaded) nor a task's
    # "slurm-ddp: error: ..." from task_init after launch.
    expect_contains "$what: the plugin's option error" "$out" "slurm-ddp: --ddp option "
    expect_contains "$what: refused naming '$needle'" "$out" "$needle"
    expect_not_contains "$what: program did not print" "$out" "RAN-THE-PROGRAM"
    if [ -e "$mark_dir/ran" ]; then fail "$what: a task ran"; else pass "$what: no task ran"; fi
    expect_eq "$what: no job reached the controller" "$after" "$before"
}

[ -n "$(jobs_submitted)" ] || { fail "sdiag shows no 'Jobs submitted' count"; finish; }
refused "unknown key" "'prot'" srun --ddp=prot=29500 -n1 sh -c "$program"
refused "unknown key lists valid keys" "gpu-bind" srun --ddp=prot=29500 -n1 sh -c "$program"
refused "bad port" "port='99999999'" srun --ddp=port=99999999 -n1 sh -c "$program"
refused "conflicting pair" "off" srun --ddp=off,verbose -n1 sh -c "$program"
refused "bad policy" "fastest" srun --ddp=gpu-bind=fastest -n1 sh -c "$program"
refused "sbatch refuses" "'prot'" sbatch --ddp=prot=1 --wrap "$program"
refused "jax has no launcher" "JAX has no per-node launcher" srun --ddp=jax,launcher -n1 sh -c "$program"
refused "tf has no launcher" "TensorFlow has no per-node launcher" srun --ddp=tf,launcher -n1 sh -c "$program"

# The counter check itself can fail: a job that is accepted moves it.
before=$(jobs_submitted)
out=$(srun_t -n1 sh -c "$program" 2>&1)
expect_contains "a good step runs" "$out" "RAN-THE-PROGRAM"
if [ "$(jobs_submitted)" -gt "$before" ]; then pass "sdiag counts an accepted job"
else fail "sdiag's 'Jobs submitted' did not move for an accepted job"; fi

help=$(srun --help 2>&1)
expect_contains "srun --help lists --ddp" "$help" "--ddp"
finish
