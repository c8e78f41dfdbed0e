#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Step-launch overhead of the plugin on the local cluster, three arms interleaved (so drift hits
# all alike), REPS times each, in this order per repetition:
#   none   `srun -n N true` with plugstack.conf emptied (a site without the plugin)
#   plain  `srun -n N true` with the plugin loaded (what every step pays once it is installed)
#   ddp    `srun --ddp -n N true`
# prints median and spread per arm and the ratios plain/none, ddp/none, ddp/plain. The "none"
# arm rewrites plugstack.conf (atomically; srun and slurmstepd reread it per step) before its
# launch and restores it after, outside the timed region; ARMS="plain ddp" leaves it alone.
#
# Then the plugin's own time, measured inside its hooks: every --ddp task logs one line
#   slurm-ddp: task R: plugin time init A us, option B us, user_init C us, task_init D us (total T us, cpu U us)
# at verbose level into its node's slurmd log (slurmstepd writes there). The script reads the
# lines its own steps added and prints, per N, median/p90 per hook and the total as a share of the
# median --ddp launch time; then srun's side (`srun -v` prints srun's line). The task lines need
# SlurmdDebug=verbose, so bring the cluster up with cluster.sh's SLURM_DEBUG knob:
#   SLURM_DEBUG=verbose bash tests/cluster/cluster.sh up
#   bash bench/overhead/plugin_overhead.sh            # N = 1 2 8 16 (the 2x8-CPU cluster's capacity)
#   REPS=50 NS="1 16" SRUN_REPS=10 ARMS="plain ddp" bash bench/overhead/plugin_overhead.sh
#   RAW=/tmp/launch.txt bash bench/overhead/plugin_overhead.sh   # also append "N ARM SECONDS" lines
#                                                       # in run order (pairs: same position)
set -euo pipefail
SDDP_CLUSTER_DIR=${SDDP_CLUSTER_DIR:-/tmp/slurm-ddp-cluster}
# shellcheck disable=SC1091
source "$SDDP_CLUSTER_DIR/env.sh"
REPS=${REPS:-100}
NS=${NS:-"1 2 8 16"}
SRUN_REPS=${SRUN_REPS:-20}
RAW=${RAW:-}
ARMS=${ARMS:-"none plain ddp"}
# shellcheck source=bench/lib/raw_header.sh
source "$(dirname "$0")/../lib/raw_header.sh"
raw_header "REPS=$REPS NS=\"$NS\" SRUN_REPS=$SRUN_REPS ARMS=\"$ARMS\" bash bench/overhead/plugin_overhead.sh"
if [[ -n $RAW && ! -s $RAW ]]; then
    raw_header "REPS=$REPS NS=\"$NS\" ARMS=\"$ARMS\" bash bench/overhead/plugin_overhead.sh (launch seconds: N ARM SECONDS)" >"$RAW"
fi
# The launch times always go to a file too: `bench/report.py overhead` turns them into an interval.
SAMPLES=$(mktemp /tmp/sddp-launch-samples.XXXXXX)
PLUGSTACK=$SDDP_CLUSTER_DIR/plugstack.conf
WITH_PLUGIN=$(cat "$PLUGSTACK")
if ! grep -q '^[^#]*spank_ddp' <<<"$WITH_PLUGIN"; then
    echo "plugin_overhead.sh: $PLUGSTACK does not load spank_ddp.so; bring the cluster up with the plugin" >&2
    exit 1
fi
# shellcheck source=bench/lib/plugstack.sh
source "$(dirname "$0")/../lib/plugstack.sh"
trap 'set_plugstack "$WITH_PLUGIN"; rm -f "$SAMPLES"' EXIT
has_arm() { [[ " $ARMS " == *" $1 "* ]]; }
LOGS=("$SDDP_CLUSTER_DIR"/log/slurmd-*.log)
[[ -e ${LOGS[0]} ]] || LOGS=()
HOOKS="init option user_init task_init total cpu"
SRUN_HOOKS="init option init_post_opt total cpu"

# stdin: numbers, one per line -> "median p10 p90" (nearest rank) times $1, with $2 decimals.
percentiles() {
    sort -n | awk -v k="$1" -v d="$2" '
        function at(q,  r) { r = int(q * NR); if (r < q * NR) r++; if (r < 1) r = 1; return v[r] * k }
        { v[NR] = $1 }
        END {
            if (NR == 0) { print "- - -"; exit }
            fmt = "%." d "f %." d "f %." d "f\n"
            printf fmt, at(0.5), at(0.1), at(0.9)
        }'
}
stats() { percentiles 1000 1; }  # seconds -> "median p10 p90" in ms
timed() { local t=$EPOCHREALTIME; "$@" >/dev/null 2>&1 || return 1; awk -v a="$t" -v b="$EPOCHREALTIME" 'BEGIN { print b - a }'; }

# Byte sizes of the slurmd logs now; new_lines SIZES... prints what was appended since.
log_sizes() { local f; for f in "${LOGS[@]}"; do stat -c %s "$f"; done; }
new_lines() {
    local f i=0 sizes=("$@")
    for f in "${LOGS[@]}"; do tail -c +$((sizes[i++] + 1)) "$f"; done
}
# stdin: timing lines -> "hook microseconds" pairs (including total and cpu).
hook_values() {
    sed -n 's/.*: plugin time //p' | tr -d '(),' |
        awk '{ for (i = 2; i < NF; i++) if ($(i + 1) == "us") print $(i - 1), $i }'
}
# "median/p90" of one hook's values; $1: the hook, stdin: hook_values output.
hook_stat() { awk -v h="$1" '$1 == h { print $2 }' | percentiles 1 0 | awk '{ print $1 "/" $3 }'; }

declare -A ddp_median timing
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "") print "-"; else printf "%.3f", a / b }'; }
printf '%-4s %-26s %-26s %-26s %-10s %-10s %s\n' N "no plugin: median (p10-p90)" \
    "plain srun: median (p10-p90)" "srun --ddp: median (p10-p90)" plain/none ddp/none ddp/plain
for n in $NS; do
    nodes=$((n > 1 ? 2 : 1))
    declare -A runs=([none]="" [plain]="" [ddp]="")
    mapfile -t before < <(log_sizes)
    for _ in $(seq "$REPS"); do
        if has_arm none; then
            set_plugstack "# emptied by bench/overhead/plugin_overhead.sh (arm: none)"
            runs[none]+="$(timed srun -N"$nodes" -n"$n" true)"$'\n'
            set_plugstack "$WITH_PLUGIN"
        fi
        if has_arm plain; then runs[plain]+="$(timed srun -N"$nodes" -n"$n" true)"$'\n'; fi
        if has_arm ddp; then runs[ddp]+="$(timed srun --ddp -N"$nodes" -n"$n" true)"$'\n'; fi
    done
    timing[$n]=$(new_lines "${before[@]}" | grep -E 'slurm-ddp: task [0-9]+: plugin time' || true)
    declare -A med=() cell=()
    for arm in none plain ddp; do
        cell[$arm]="-"
        med[$arm]=""
        [ -n "${runs[$arm]}" ] || continue
        read -r m p10 p90 <<<"$(grep . <<<"${runs[$arm]}" | stats)"
        med[$arm]=$m
        cell[$arm]="$m ms ($p10-$p90)"
        grep . <<<"${runs[$arm]}" | sed "s/^/$n $arm /" >>"$SAMPLES"
    done
    ddp_median[$n]=${med[ddp]}
    printf '%-4s %-26s %-26s %-26s %-10s %-10s %s\n' "$n" "${cell[none]}" "${cell[plain]}" "${cell[ddp]}" \
        "$(ratio "${med[plain]}" "${med[none]}")" "$(ratio "${med[ddp]}" "${med[none]}")" \
        "$(ratio "${med[ddp]}" "${med[plain]}")"
done
echo "($REPS interleaved repetitions each of: $ARMS; $(nproc) cores; cluster: $SDDP_CLUSTER_NODELIST)"
[[ -z $RAW ]] || cat "$SAMPLES" >>"$RAW"
echo
echo "how well this run resolves the ratios (bench/report.py overhead; the goal is < 1.02):"
python3 "$(dirname "$0")/../report.py" overhead "$SAMPLES"

echo
echo "plugin's own time per --ddp task, us, median/p90 (from the slurmd logs; init, option and"
echo "user_init run once per node before the tasks fork, task_init in each task in parallel)"
printf '%-6s %-10s' N "tasks"
for h in $HOOKS; do printf ' %-10s' "$h"; done
printf ' %s\n' "total/launch"
found_any=0
for n in $NS; do
    values=$(hook_values <<<"${timing[$n]}")
    found=$(grep -c . <<<"${timing[$n]}" || true)
    ((found > 0)) && found_any=1
    printf '%-6s %-10s' "$n" "$found/$((n * REPS))"
    for h in $HOOKS; do printf ' %-10s' "$(hook_stat "$h" <<<"$values")"; done
    total=$(awk '$1 == "total" { print $2 }' <<<"$values" | percentiles 1 0 | cut -d' ' -f1)
    awk -v t="$total" -v l="${ddp_median[$n]}" \
        'BEGIN { if (t == "-") print " -"; else printf " %.3f %%\n", t / (l * 1000) * 100 }'
done
if ((found_any == 0)); then
    echo "(no timing lines: the task lines are logged at verbose level; restart the cluster with" \
        "SLURM_DEBUG=verbose bash tests/cluster/cluster.sh up)"
fi

# srun's side: its own hooks, printed by `srun -v` on srun's stderr (a separate, short loop, so
# that -v does not slow down the runs timed above).
srun_lines=""
for _ in $(seq "$SRUN_REPS"); do
    srun_lines+="$(srun -v --ddp -n1 true 2>&1 | grep -E 'slurm-ddp: srun: plugin time' || true)"$'\n'
done
values=$(hook_values <<<"$srun_lines")
printf '%-17s' "srun (srun -v)"
for h in $SRUN_HOOKS; do printf ' %s %s' "$h" "$(hook_stat "$h" <<<"$values")"; done
echo " us, median/p90 of $(grep -c . <<<"$srun_lines" || true) of $SRUN_REPS runs"
