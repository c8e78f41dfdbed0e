# SPDX-License-Identifier: Apache-2.0
# Shared helpers for integration tests against the local Slurm cluster (tests/cluster/cluster.sh).
# Each test script sources this file, runs real srun/sbatch steps and asserts on their output.
# Exit codes: 0 pass, 1 fail, 77 skip (ctest SKIP_RETURN_CODE).
set -euo pipefail
# A command that set -e stops on would end a test with no FAIL line, and a truncated CI log would
# then name only the test: the main shell says which command it was (a subshell's failure shows
# where the main shell used it). The ERR trap runs exactly where set -e stops, so this adds no exit.
set -E
stopped_by_errexit() {
    local rc=$?
    if [ "$BASHPID" = "$$" ] && [[ $- == *e* ]]; then
        echo "FAIL: ${3##*/}:$1: '$2' exited with status $rc, and set -e ended the test there"
    fi
    return "$rc"
}
trap 'stopped_by_errexit "$LINENO" "$BASH_COMMAND" "${BASH_SOURCE[0]}"' ERR

SDDP_CLUSTER_DIR=${SDDP_CLUSTER_DIR:-/tmp/slurm-ddp-cluster}
SDDP_SOURCE_DIR=${SDDP_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
SDDP_BUILD_DIR=${SDDP_BUILD_DIR:-$SDDP_SOURCE_DIR/build}
PLUGIN=${PLUGIN:-$SDDP_BUILD_DIR/spank_plugin/spank_ddp.so}
CLUSTER="$SDDP_SOURCE_DIR/tests/cluster/cluster.sh"
PRINTER="$SDDP_SOURCE_DIR/tests/integration/print_task_env.sh"
FAILURES=0
# Where tests keep files that job steps read or write. Under job containers (the production
# profile) a job's /tmp is its own, so such files live outside /tmp there (env.sh says where).
SDDP_WORK_ROOT=${SDDP_WORK_ROOT:-/tmp}

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; FAILURES=$((FAILURES + 1)); }
pass() { echo "ok: $*"; }
finish() {
    if [ "$FAILURES" -ne 0 ]; then echo "$FAILURES check(s) failed"; exit 1; fi
    echo "all checks passed"
}

[ -f "$SDDP_CLUSTER_DIR/env.sh" ] || skip "no local cluster at $SDDP_CLUSTER_DIR (run tests/cluster/cluster.sh up)"
# shellcheck disable=SC1091
source "$SDDP_CLUSTER_DIR/env.sh"
[ -f "$PLUGIN" ] || skip "plugin not built: $PLUGIN"

# Every srun/sbatch is bounded: a hang is a failure, not a stuck CI job.
SRUN_TIMEOUT=${SRUN_TIMEOUT:-60}
srun_t() { timeout "$SRUN_TIMEOUT" srun "$@"; }

# Register the plugin with the given plugin arguments (no restart needed); restore on exit.
use_plugin() { bash "$CLUSTER" plugin "$PLUGIN" "$@" >/dev/null; }
no_plugin() { bash "$CLUSTER" plugin none >/dev/null; }
trap 'use_plugin' EXIT

# fail_run WHAT RC OUTPUT: a command that failed, with its exit status (124: srun_t's timeout) and
# the last error line on the FAIL line itself, which a truncated CI log keeps; then its output's tail.
fail_run() {
    local why="exit status $2"
    [ "$2" -ne 124 ] || why="exit status 124: its time limit ran out"
    fail "$1 failed ($why): $(grep -E 'Error|error:|Traceback|[Tt]imed out|refused|FAIL' <<<"$3" | tail -1 | cut -c1-200)"
    tail -40 <<<"$3"
}
expect_eq() {  # expect_eq WHAT ACTUAL EXPECTED
    if [ "$2" == "$3" ]; then pass "$1"; else fail "$1: got '$2', expected '$3'"; fi
}
expect_contains() {  # expect_contains WHAT HAYSTACK NEEDLE
    if grep -qF -- "$3" <<<"$2"; then pass "$1"; else fail "$1: '$3' not in output:"; echo "$2" | head -20; fi
}
expect_not_contains() {
    if grep -qF -- "$3" <<<"$2"; then fail "$1: '$3' unexpectedly in output:"; echo "$2" | head -20; else pass "$1"; fi
}

# Field N (1-based) of the line whose first field is RANK, from print_task_env.sh output.
wait_for() {  # wait_for SECONDS COMMAND...: poll every 0.5 s until COMMAND succeeds
    local end=$((SECONDS + $1))
    shift
    until "$@"; do
        [ $SECONDS -ge $end ] && return 1
        sleep 0.5
    done
}
# One field of `scontrol show job` (Restarts, JobState...), empty once the job is gone.
job_field() { scontrol show job "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" | head -1; }
# A test starts on an idle cluster: a job an earlier test left behind would hold the nodes this
# test's steps then wait for. Such jobs are named on the test's output and cancelled.
queue_empty() { [ -z "$(squeue -h -o %i 2>/dev/null)" ]; }
settle_queue() {
    wait_for 20 queue_empty && return 0
    echo "note: jobs an earlier test left, cancelled: $(squeue -h -o '%i %j %T %M' | paste -sd';')"
    squeue -h -o %i | xargs -r scancel
    wait_for 30 queue_empty || echo "note: still in the queue: $(squeue -h -o '%i %j %T' | paste -sd';')"
}
field_of_rank() { awk -v r="$1" -v f="$2" '$1 == "task" && $2 == r { print $f }' <<<"$3"; }

use_plugin
settle_queue

# check_world OUTPUT NTASKS NNODES MASTER: every invariant of a --ddp step, from the tasks' lines.
check_world() {
    local out=$1 ntasks=$2 nnodes=$3 master=$4 problems
    problems=$(awk -v N="$ntasks" -v M="$nnodes" -v master="$master" '
        $1 != "task" { next }
        { lines++; rank[$3]++; host_count[$13]++; port[$12]++; node_of_host[$13] = $7
          if ($3 != $2) printf "rank %s: RANK=%s but SLURM_PROCID=%s\n", $2, $3, $2
          if ($4 != $14) printf "rank %s: LOCAL_RANK=%s but SLURM_LOCALID=%s\n", $2, $4, $14
          if ($5 != N) printf "rank %s: WORLD_SIZE=%s, expected %s\n", $2, $5, N
          if ($8 != $7) printf "rank %s: GROUP_RANK=%s != NODE_RANK=%s\n", $2, $8, $7
          if ($9 != M || $10 != M) printf "rank %s: GROUP_WORLD_SIZE=%s NNODES=%s, expected %s\n", $2, $9, $10, M
          if ($11 != master) printf "rank %s: MASTER_ADDR=%s, expected %s\n", $2, $11, master
          if ($15 != 64) printf "rank %s: SLURM_DDP_SECRET has %s hex chars, expected 64\n", $2, $15
          lws[$2] = $6; hostof[$2] = $13 }
        END {
          if (lines != N) printf "%d task lines, expected %d\n", lines, N
          for (r = 0; r < N; r++) if (rank[r] != 1) printf "RANK %d appears %d times\n", r, rank[r]
          n = 0; for (p in port) n++; if (n != 1) printf "%d different MASTER_PORTs\n", n
          for (r in lws) if (lws[r] != host_count[hostof[r]]) printf "rank %s: LOCAL_WORLD_SIZE=%s but %d tasks on %s\n", r, lws[r], host_count[hostof[r]], hostof[r]
          # NODE_RANK must be the index of the host in the step: distinct per host, 0..M-1
          k = 0; for (h in node_of_host) { seen[node_of_host[h]]++; k++ }
          if (k != M) printf "%d hosts, expected %d\n", k, M
          for (i = 0; i < M; i++) if (seen[i] != 1) printf "NODE_RANK %d used by %d hosts\n", i, seen[i]
        }' <<<"$out")
    if [ -z "$problems" ]; then pass "world of $ntasks tasks on $nnodes node(s), master $master"
    else fail "world of $ntasks tasks on $nnodes node(s):"; echo "$problems"; echo "$out"; fi
}

# sbatch_out SBATCH_ARGS... : submit, wait (bounded), print the job's stdout file.
sbatch_out() {
    local dir out jobid
    dir=$(mktemp -d /tmp/sddp-it.XXXXXX)
    out="$dir/out"
    jobid=$(timeout "$SRUN_TIMEOUT" sbatch --parsable --wait -o "$out" -e "$out" "$@") || {
        echo "sbatch failed (job ${jobid:-?}):" >&2; cat "$out" >&2 2>/dev/null; rm -rf "$dir"; return 1; }
    cat "$out"
    rm -rf "$dir"
}
