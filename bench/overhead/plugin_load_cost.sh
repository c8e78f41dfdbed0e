#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# What the plugin costs a step that does not ask for --ddp, as instructions (valgrind's callgrind:
# the same figure on a loaded machine, where the launch-time arms of plugin_overhead.sh cannot
# tell 2 % from 0). `srun -n1 true` on the running cluster, REPS times per arm, arms interleaved:
#   none      plugstack.conf emptied (a site without the plugin)
#   LABEL     the plugin at PATH loaded as `required`, for each LABEL=PATH of PLUGINS
#             (default: built=<build>/spank_plugin/spank_ddp.so)
# Every process srun starts counts (callgrind's "Collected" lines summed). srun is where the
# plugin's load shows alone; each node's slurmstepd loads the same file the same way once per
# step, so the srun figure is also what a step pays per node. Prints instructions per arm (the
# median of REPS; they differ by under 0.1 %), the difference to `none` and its share.
#   flock -o /tmp/sddp-cluster.lock bash bench/overhead/plugin_load_cost.sh
#   PLUGINS="shared-runtime=/tmp/old.so built=build/spank_plugin/spank_ddp.so" REPS=3 bash ...
set -euo pipefail
SDDP_CLUSTER_DIR=${SDDP_CLUSTER_DIR:-/tmp/slurm-ddp-cluster}
# shellcheck disable=SC1091
source "$SDDP_CLUSTER_DIR/env.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${SDDP_BUILD_DIR:-$ROOT/build}
PLUGINS=${PLUGINS:-built=$BUILD/spank_plugin/spank_ddp.so}
REPS=${REPS:-3}
command -v valgrind >/dev/null || { echo "plugin_load_cost.sh: valgrind is needed" >&2; exit 1; }
# shellcheck disable=SC1091 # bench/lib/raw_header.sh
source "$ROOT/bench/lib/raw_header.sh"
raw_header "PLUGINS=\"$PLUGINS\" REPS=$REPS bash bench/overhead/plugin_load_cost.sh"
PLUGSTACK=$SDDP_CLUSTER_DIR/plugstack.conf
ORIGINAL=$(cat "$PLUGSTACK")
# shellcheck disable=SC1091 # bench/lib/plugstack.sh
source "$ROOT/bench/lib/plugstack.sh"
TMP=$(mktemp -d /tmp/sddp-load-cost.XXXXXX)
trap 'set_plugstack "$ORIGINAL"; rm -rf "$TMP"' EXIT

arms=(none)
declare -A path=()
for p in $PLUGINS; do
    label=${p%%=*} file=${p#*=}
    [[ -f $file ]] || { echo "plugin_load_cost.sh: $label: no file $file" >&2; exit 1; }
    file=$(readlink -f "$file")
    path[$label]=$file
    arms+=("$label")
    echo "# $label: $file ($(readelf -d "$file" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' '))"
done

declare -A runs=()
for ((r = 1; r <= REPS; r++)); do
    for arm in "${arms[@]}"; do
        if [[ $arm = none ]]; then set_plugstack "# emptied by plugin_load_cost.sh"; else set_plugstack "required ${path[$arm]}"; fi
        valgrind --tool=callgrind --callgrind-out-file="$TMP/cg.%p" srun -n1 true 2>"$TMP/log" ||
            { cat "$TMP/log" >&2; exit 1; }
        ir=$(sed -n 's/^==[0-9]*== Collected : \([0-9]*\)$/\1/p' "$TMP/log" | awk '{ s += $1 } END { print s }')
        echo "REP arm=$arm ir=$ir"
        runs[$arm]+="$ir "
        rm -f "$TMP"/cg.*
    done
done
median() { tr ' ' '\n' | grep . | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
base=$(median <<<"${runs[none]}")
echo
printf '%-16s %16s %14s %8s\n' arm "instructions" "+ vs none" "share"
for arm in "${arms[@]}"; do
    m=$(median <<<"${runs[$arm]}")
    printf '%-16s %16s %14s %7.2f%%\n' "$arm" "$m" "$((m - base))" "$(awk -v a="$m" -v b="$base" 'BEGIN { print (a - b) * 100 / b }')"
done
echo "(srun -n1 true on the cluster, median of $REPS per arm, all of srun's processes; a step's slurmstepd on each node loads the plugin the same way)"
