#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# What --ddp=check adds to a step launch: `srun --ddp -N2 -n2 true` and the same with
# --ddp=check, alternating (drift hits both alike), REPS pairs inside one allocation (no
# queueing); then `srun --ddp slurm-ddp check` alone. Prints medians, p10-p90 and the paired
# difference. On the local cluster (tests/cluster/cluster.sh up), as root:
#   bash bench/overhead/check_overhead.sh                  # REPS=30
#   REPS=100 SLURM_DDP_CHECK_TOOL=/usr/bin/slurm-ddp bash bench/overhead/check_overhead.sh
set -euo pipefail
SDDP_CLUSTER_DIR=${SDDP_CLUSTER_DIR:-/tmp/slurm-ddp-cluster}
# shellcheck disable=SC1091
source "$SDDP_CLUSTER_DIR/env.sh"
SRC=$(cd "$(dirname "$0")/../.." && pwd)
export SLURM_DDP_CHECK_TOOL=${SLURM_DDP_CHECK_TOOL:-$SRC/build/tools/slurm-ddp}
export REPS=${REPS:-30}
[ -x "$SLURM_DDP_CHECK_TOOL" ] || { echo "no $SLURM_DDP_CHECK_TOOL" >&2; exit 1; }
# shellcheck source=bench/lib/raw_header.sh
source "$SRC/bench/lib/raw_header.sh"
raw_header "REPS=$REPS SLURM_DDP_CHECK_TOOL=$SLURM_DDP_CHECK_TOOL bash bench/overhead/check_overhead.sh"
RAW=$(mktemp)
trap 'rm -f "$RAW"' EXIT
# shellcheck disable=SC2016 # expanded inside the allocation
timeout 600 salloc -N2 -n4 bash -c '
  stamp() { date +%s.%N; }
  for _ in $(seq "$REPS"); do
    for opt in --ddp --ddp=check; do
      t0=$(stamp); srun "$opt" -N2 -n2 true; t1=$(stamp)
      echo "$opt $t0 $t1"
    done
  done
  for _ in $(seq 10); do
    t0=$(stamp); srun --ddp -N2 -n4 "$SLURM_DDP_CHECK_TOOL" check >/dev/null; t1=$(stamp)
    echo "check $t0 $t1"
  done' >"$RAW" 2>/dev/null
python3 - "$RAW" <<'PY'
import statistics as st, sys
runs = {}
for line in open(sys.argv[1]):
    what, t0, t1 = line.split()
    runs.setdefault(what, []).append(float(t1) - float(t0))
def q(v, f): v = sorted(v); return v[min(len(v) - 1, int(f * len(v)))]
for what, v in runs.items():
    print(f"{what:12} n={len(v):3} median {st.median(v)*1e3:6.1f} ms  p10-p90 {q(v,.1)*1e3:.1f}-{q(v,.9)*1e3:.1f} ms")
d = [c - p for p, c in zip(runs["--ddp"], runs["--ddp=check"])]
print(f"paired difference median {st.median(d)*1e3:+.1f} ms  p10-p90 {q(d,.1)*1e3:+.1f} - {q(d,.9)*1e3:+.1f} ms")
PY
