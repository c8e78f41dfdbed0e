#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Many nodes: a cluster of its own with SDDP_MANY_NODES (32) slurmd in network namespaces, then
# srun --ddp across all of them: the C example over TCP and over PMIx (every node a leader, the
# same host list both ways) and the PyTorch trainer (gloo) with a few ranks per node.
#
# It brings the cluster up in SDDP_CLUSTER_DIR and down again at exit, so it must not run while
# another cluster is up (ctest label cluster32, its own phase in scripts/test.sh).
set -euo pipefail
SDDP_SOURCE_DIR=${SDDP_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
SDDP_BUILD_DIR=${SDDP_BUILD_DIR:-$SDDP_SOURCE_DIR/build}
CLUSTER="$SDDP_SOURCE_DIR/tests/cluster/cluster.sh"
NODES=${SDDP_MANY_NODES:-32}
PER_NODE=${SDDP_MANY_PER_NODE:-2}
# Each torch rank holds ~120 MiB of its own and ~2 s of CPU to import: 2 per node is 64 ranks.
TORCH_PER_NODE=${SDDP_MANY_TORCH_PER_NODE:-2}
export SDDP_CLUSTER_DIR=${SDDP_CLUSTER_DIR:-/tmp/sddp-many}
export PLUGIN=${PLUGIN:-$SDDP_BUILD_DIR/spank_plugin/spank_ddp.so}
C="$SDDP_BUILD_DIR/examples/c_minimal/c_minimal"
PY=/usr/bin/python3
TRAINER="$SDDP_SOURCE_DIR/examples/pytorch/train_ddp.py"

[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (network namespaces, daemons)"; exit 77; }
[ -x "$C" ] || { echo "SKIP: examples not built ($C); configure with -DSDDP_BUILD_EXAMPLES=ON"; exit 77; }
[ -f "$PLUGIN" ] || { echo "SKIP: plugin not built: $PLUGIN"; exit 77; }

down() { bash "$CLUSTER" down >/dev/null 2>&1 || bash "$CLUSTER" down; }
trap down EXIT
t=$(date +%s.%N)
NODES=$NODES bash "$CLUSTER" up
echo "cluster of $NODES nodes up in $(awk -v a="$t" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}') s;" \
    "daemons' memory (RSS): $(ps -eo rss=,comm= | awk '$2 ~ /^(slurmd|slurmctld|munged)$/ {s += $1} END {printf "%d MiB", s / 1024}')"

source "$(dirname "$0")/lib.sh"
trap down EXIT  # lib.sh's trap re-registers the plugin; this cluster goes away instead

N=$((NODES * PER_NODE))

# Block distribution: ranks k*PER_NODE .. k*PER_NODE+PER_NODE-1 on n(k+1).
want_hosts="hosts:"
for ((r = 0; r < N; r++)); do want_hosts+=" $r=n$((r / PER_NODE + 1))"; done

expect_world() {  # expect_world WHAT OUTPUT TRANSPORT
    local lines hosts
    lines=$(grep -cE "^rank [0-9]+ of $N on n[0-9]+: local rank [0-9]+ of $PER_NODE, node [0-9]+ of $NODES \(identity: ddp, transport: $3\)" <<<"$2" || true)
    hosts=$(grep '^hosts:' <<<"$2" || true)
    if [ "$lines" = "$N" ] && [ "$hosts" = "$want_hosts" ]; then
        pass "$1: $N ranks on $NODES nodes agree on the host list"
    else
        fail "$1: $lines of $N rank lines, host list ${hosts:0:120}..."; echo "$2" | tail -20
    fi
}

timed() {  # timed VAR COMMAND...: output in VAR, seconds in ${VAR}_s
    local __t0 __out __rc=0
    __t0=$(date +%s.%N)
    __out=$("${@:2}" 2>&1) || __rc=$?
    printf -v "$1" '%s' "$__out"
    printf -v "${1}_s" '%s' "$(awk -v a="$__t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}')"
    return $__rc
}

timed out srun_t --ddp -N"$NODES" --ntasks-per-node="$PER_NODE" "$C" || fail "C example over TCP failed"
expect_world "srun --ddp -N$NODES, TCP (${out_s} s)" "$out" tcp
tcp_hosts=$(grep '^hosts:' <<<"$out" || true)

# The node leaders' k-ary tree with a small fanout: 32 nodes at k = 2 are 5 levels deep, and the
# last node's leader joins a middle leader, not rank 0 (SDDP_DEBUG=info logs each leader's parent).
export SLURM_DDP_TREE_FANOUT=2 SDDP_DEBUG=info
timed out srun_t --ddp -N"$NODES" --ntasks-per-node="$PER_NODE" "$C" ||
    fail "C example over TCP with tree fanout 2 failed"
unset SLURM_DDP_TREE_FANOUT SDDP_DEBUG
expect_world "srun --ddp -N$NODES, TCP, leaders' tree fanout 2 (${out_s} s)" "$out" tcp
expect_contains "fanout 2: node $((NODES - 1))'s leader joins node $(((NODES - 2) / 2))'s" "$out" \
    "node $((NODES - 1))'s leader joined node $(((NODES - 2) / 2))'s leader (tree fanout 2"

SLURM_DDP_TRANSPORT=pmix timed out srun_t --ddp --mpi=pmix -N"$NODES" --ntasks-per-node="$PER_NODE" "$C" || fail "C example over PMIx failed"
expect_world "srun --ddp --mpi=pmix -N$NODES, PMIx (${out_s} s)" "$out" pmix
expect_eq "PMIx and TCP give the same host list" "$(grep '^hosts:' <<<"$out" || true)" "$tcp_hosts"

if "$PY" -c 'import torch.distributed' 2>/dev/null; then
    NT=$((NODES * TORCH_PER_NODE))
    # Importing torch in every rank at once on 2 cores is what takes the time.
    SRUN_TIMEOUT=400 timed out srun_t --ddp -N"$NODES" --ntasks-per-node="$TORCH_PER_NODE" "$PY" "$TRAINER" --epochs 1 ||
        fail "trainer failed"
    expect_contains "trainer: gloo from env:// (${out_s} s)" "$out" "backend gloo"
    expect_contains "trainer: $NT ranks on $NODES nodes hold identical weights" "$out" \
        "OK: $NT ranks hold identical weights"

else
    echo "note: python3-torch is not installed for $PY; trainer not run"
fi
finish
