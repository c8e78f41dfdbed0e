#!/bin/bash
# Step-launch overhead of --ddp: `srun -n N true` with and without --ddp on the local cluster,
# interleaved (so drift hits both alike), REPS times each; prints median, spread and the ratio.
#   bash bench/plugin_overhead.sh            # N = 1 2 8 16 (the 2x8-CPU cluster's capacity)
#   REPS=50 NS="1 16" bash bench/plugin_overhead.sh
set -euo pipefail
SDDP_CLUSTER_DIR=${SDDP_CLUSTER_DIR:-/tmp/slurm-ddp-cluster}
# shellcheck disable=SC1091
source "$SDDP_CLUSTER_DIR/env.sh"
REPS=${REPS:-30}
NS=${NS:-"1 2 8 16"}

stats() {  # stdin: seconds, one per line -> "median p10 p90" in ms
    sort -n | awk '{ v[NR] = $1 } END { printf "%.1f %.1f %.1f", v[int((NR + 1) / 2)] * 1000, v[int(NR * 0.1) + 1] * 1000, v[int(NR * 0.9)] * 1000 }'
}
timed() { local t=$EPOCHREALTIME; "$@" >/dev/null 2>&1 || return 1; awk -v a="$t" -v b="$EPOCHREALTIME" 'BEGIN { print b - a }'; }

printf '%-6s %-28s %-28s %s\n' N "plain srun: median (p10-p90)" "srun --ddp: median (p10-p90)" "ratio"
for n in $NS; do
    nodes=$(( n > 1 ? 2 : 1 ))
    plain=""; ddp=""
    for _ in $(seq "$REPS"); do
        plain+="$(timed srun -N"$nodes" -n"$n" true)"$'\n'
        ddp+="$(timed srun --ddp -N"$nodes" -n"$n" true)"$'\n'
    done
    read -r pm p10 p90 <<<"$(grep . <<<"$plain" | stats)"
    read -r dm d10 d90 <<<"$(grep . <<<"$ddp" | stats)"
    printf '%-6s %-28s %-28s %.3f\n' "$n" "$pm ms ($p10-$p90)" "$dm ms ($d10-$d90)" "$(awk -v a="$dm" -v b="$pm" 'BEGIN { print a / b }')"
done
echo "($REPS interleaved repetitions each; $(nproc) cores; cluster: $SDDP_CLUSTER_NODELIST)"
