#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# What one change to the rendezvous would buy in the fork harness, before anyone builds it
# properly: a patch under bench/harness/experiments/ that takes its other path only while an
# environment variable is set, built once in a scratch worktree of HEAD, so both arms run the same
# binary and take turns (committed path, patched path, committed, ...) as bootstrap_bench's
# variants take turns inside a run. Each run also measures floor-prelisten, so each arm's ratio to
# the best floor comes from the same minute.
#   bash bench/harness/experiment.sh PATCH VARIABLE > RAW
# (RAW a new file, copied into bench/results/ afterwards: writing over a tracked raw file while
# the run goes on makes the header call the commit dirty.)
# Env: NS=8,64 REPS=21 PAIRS=5. Prints a raw file (header from bench/lib/raw_header.sh): every
# RESULT line prefixed with its arm and pair, then the median over pairs of each arm's ratio.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PATCH=$(realpath "${1:?usage: experiment.sh PATCH VARIABLE}")
VAR=${2:?usage: experiment.sh PATCH VARIABLE}
[[ -f $PATCH ]] || { echo "experiment.sh: no patch at $PATCH" >&2; exit 2; }
NS=${NS:-8,64}
REPS=${REPS:-21}
PAIRS=${PAIRS:-5}
# shellcheck source=bench/lib/raw_header.sh
source "$ROOT/bench/lib/raw_header.sh"
raw_header "bash bench/harness/experiment.sh ${PATCH#"$ROOT"/} $VAR (NS=$NS REPS=$REPS PAIRS=$PAIRS)"
echo "# patch: ${PATCH#"$ROOT"/}, sha256 $(sha256sum "$PATCH" | cut -c1-16), applied to HEAD in a scratch worktree"

tree=$(mktemp -d)
trap 'git -C "$ROOT" worktree remove --force "$tree" >/dev/null 2>&1 || rm -rf "$tree"' EXIT
git -C "$ROOT" worktree add --quiet --detach "$tree" HEAD
git -C "$tree" apply "$PATCH"
# Configured as bench/run.sh configures build-bench, so the committed arm is the harness's ours.
cmake -S "$tree" -B "$tree/build" -DSDDP_BUILD_BENCH=ON -DSDDP_BUILD_EXAMPLES=OFF \
    -DSDDP_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE="${SDDP_BENCH_BUILD_TYPE:-RelWithDebInfo}" >/dev/null
cmake --build "$tree/build" -j"$(nproc)" --target bootstrap_bench >/dev/null
bench=$tree/build/bench/bootstrap_bench

for pair in $(seq 1 "$PAIRS"); do
    for arm in committed patched; do
        if [[ $arm == patched ]]; then export "$VAR=1"; else unset "$VAR"; fi
        "$bench" --variants ours-2level,floor-prelisten --ns "$NS" --reps "$REPS" |
            sed -n "s/^RESULT /RESULT arm=$arm pair=$pair /p"
    done
done | tee "$tree/results"
unset "$VAR"

echo "# ours-2level / floor-prelisten, id, median over the $PAIRS pairs (each ratio from one run)"
python3 - "$tree/results" <<'PY'
import statistics, sys
ids = {}
for line in open(sys.argv[1]):
    f = dict(w.split("=", 1) for w in line.split()[1:])
    if "id_med" not in f:  # a failed point (ok=0): its run printed why
        continue
    ids[f["arm"], f["pair"], f["impl"], int(f["n"])] = float(f["id_med"])
for arm in ("committed", "patched"):
    for n in sorted({k[3] for k in ids}):
        pairs = {p for (a, p, impl, m) in ids if a == arm and m == n and impl == "ours-2level"
                 and (arm, p, "floor-prelisten", n) in ids}
        if not pairs:
            print("RATIO arm=%s n=%d no pair where both variants completed" % (arm, n))
            continue
        r = [ids[arm, p, "ours-2level", n] / ids[arm, p, "floor-prelisten", n] for p in pairs]
        ms = statistics.median(ids[arm, p, "ours-2level", n] for p in pairs) * 1e3
        print("RATIO arm=%s n=%d ours_id_med_ms=%.3f ours_over_floor_med=%.2f min=%.2f max=%.2f"
              % (arm, n, ms, statistics.median(r), min(r), max(r)))
PY
