#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Where one harness variant spends more than another: `perf record -e cpu-clock` (a software
# clock, so it works in a VM without a PMU) of bootstrap_bench running each variant alone, then
# the samples per symbol (kernel and user space, the forking parent included, as the harness runs
# them) side by side, the largest differences first, and the page faults per symbol
# (`-e page-faults`, every fault) the same way. Each sample is 1/FREQ s of one CPU.
#   bash bench/harness/profile_diff.sh BUILD [VARIANT_A] [VARIANT_B]
# Env: N=64 REPS=5 FREQ=20000 TOP=25. Defaults: ours-2level against authfloor-tree. Needs perf
# (root, or kernel.perf_event_paranoid <= 1); prints a raw file (header from
# bench/lib/raw_header.sh) on stdout.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:?usage: profile_diff.sh BUILD [VARIANT_A] [VARIANT_B]}
A=${2:-ours-2level}
B=${3:-authfloor-tree}
N=${N:-64}
REPS=${REPS:-5}
FREQ=${FREQ:-20000}
TOP=${TOP:-25}
BENCH=$BUILD/bench/bootstrap_bench
# shellcheck source=bench/lib/raw_header.sh
source "$ROOT/bench/lib/raw_header.sh"
raw_header "bash bench/harness/profile_diff.sh $* (N=$N REPS=$REPS FREQ=$FREQ TOP=$TOP)"
export LD_BIND_NOW=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# $1 event options, $2 variant, $3 output: "samples<TAB>dso symbol" per line.
per_symbol() {
    # shellcheck disable=SC2086
    perf record $1 -o "$tmp/perf.data" "$BENCH" --variants "$2" --ns "$N" --reps "$REPS" \
        >/dev/null 2>&1
    perf report -i "$tmp/perf.data" --no-children -n --sort dso,sym --stdio 2>/dev/null |
        awk '/%/ && $1 ~ /%$/ { n = $2; $1 = ""; $2 = ""; sub(/^ +/, ""); print n "\t" $0 }' >"$3"
}

side_by_side() {  # $1 title, $2 and $3 per-symbol files
    echo "# $1: $A against $B, N = $N, $REPS repetitions each"
    python3 - "$2" "$3" "$A" "$B" "$TOP" <<'EOF'
import sys
def load(p):
    d = {}
    for line in open(p):
        n, s = line.rstrip("\n").split("\t", 1)
        d[s] = d.get(s, 0) + int(n)
    return d
a, b = load(sys.argv[1]), load(sys.argv[2])
print("| symbol | %s | %s | difference |" % (sys.argv[3], sys.argv[4]))
print("|---|---|---|---|")
print("| all | %d | %d | %+d |" % (sum(a.values()), sum(b.values()), sum(a.values()) - sum(b.values())))
rows = sorted(((a.get(k, 0) - b.get(k, 0), k) for k in set(a) | set(b)), reverse=True)
for d, k in rows[:int(sys.argv[5])]:
    print("| %s | %d | %d | %+d |" % (k, a.get(k, 0), b.get(k, 0), d))
EOF
}

per_symbol "-e cpu-clock -F $FREQ" "$A" "$tmp/a.clock"
per_symbol "-e cpu-clock -F $FREQ" "$B" "$tmp/b.clock"
side_by_side "cpu-clock samples at $FREQ Hz" "$tmp/a.clock" "$tmp/b.clock"
echo
per_symbol "-e page-faults -c 1" "$A" "$tmp/a.faults"
per_symbol "-e page-faults -c 1" "$B" "$tmp/b.faults"
side_by_side "page faults, by the symbol that took them" "$tmp/a.faults" "$tmp/b.faults"
