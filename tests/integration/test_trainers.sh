#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Trainers and launchers under --ddp on the real cluster: torchrun per node (--ddp=launcher)
# training across 2 nodes, torch's own is_torchelastic_launched() with and without
# --ddp=torchelastic, torchrun's worker defaults, rank-order=node under -m cyclic and plane=2,
# disjoint port blocks of concurrent steps, net-hints (GLOO_SOCKET_IFNAME) and debug.
source "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
TRAINER="$SDDP_SOURCE_DIR/examples/pytorch/train_ddp.py"
dir=$(mktemp -d /tmp/sddp-trainers.XXXXXX)
chmod 755 "$dir"
trap 'rm -rf "$dir"; use_plugin' EXIT

# One line per task: kv PROCID NODEID LOCALID HOST then NAME=VALUE for the names given.
cat >"$dir/kv.sh" <<'EOS'
#!/bin/bash
line="kv $SLURM_PROCID $SLURM_NODEID $SLURM_LOCALID $(hostname)"
for n in "$@"; do line+=" $n=${!n-unset}"; done
echo "$line"
EOS
chmod +x "$dir/kv.sh"
kv() { grep '^kv ' | sort -k2n; }
# value NAME LINE
value() { tr ' ' '\n' <<<"$2" | sed -n "s/^$1=//p"; }

# ---- launcher: one task per node runs a launcher --------------------------------------------
LVARS="PET_NNODES PET_NODE_RANK PET_NPROC_PER_NODE PET_MASTER_ADDR PET_MASTER_PORT RANK WORLD_SIZE LOCAL_RANK SLURM_DDP_NUM_PROCESSES"
out=$(srun_t --ddp=launcher -N2 --ntasks-per-node=1 "$dir/kv.sh" $LVARS | kv)
l0=$(sed -n 1p <<<"$out"); l1=$(sed -n 2p <<<"$out")
expect_eq "launcher: PET_NNODES" "$(value PET_NNODES "$l0") $(value PET_NNODES "$l1")" "2 2"
expect_eq "launcher: PET_NODE_RANK per node" "$(value PET_NODE_RANK "$l0") $(value PET_NODE_RANK "$l1")" "0 1"
expect_eq "launcher: PET_NPROC_PER_NODE defaults to 1 without GPUs" "$(value PET_NPROC_PER_NODE "$l0")" 1
expect_eq "launcher: PET_MASTER_ADDR is the first node" "$(value PET_MASTER_ADDR "$l1")" n1
expect_eq "launcher: one PET_MASTER_PORT" "$(value PET_MASTER_PORT "$l0")" "$(value PET_MASTER_PORT "$l1")"
expect_eq "launcher: no per-rank variables" "$(value RANK "$l0") $(value WORLD_SIZE "$l1") $(value LOCAL_RANK "$l1")" "unset unset unset"
out=$(srun_t --ddp=launcher,nproc=3 -N2 --ntasks-per-node=1 "$dir/kv.sh" $LVARS | kv)
expect_eq "launcher: nproc=3" "$(value PET_NPROC_PER_NODE "$(head -1 <<<"$out")")" 3
expect_eq "launcher: SLURM_DDP_NUM_PROCESSES (accelerate's --num_processes)" \
    "$(value SLURM_DDP_NUM_PROCESSES "$(head -1 <<<"$out")")" 6
if [ "${SDDP_CLUSTER_GPUS_PER_NODE:-0}" -ge 2 ]; then
    out=$(srun_t --ddp=launcher -N2 --ntasks-per-node=1 --gpus-per-node=2 "$dir/kv.sh" PET_NPROC_PER_NODE CUDA_VISIBLE_DEVICES | kv)
    expect_eq "launcher: PET_NPROC_PER_NODE = the node's GPUs of the step" "$(value PET_NPROC_PER_NODE "$(head -1 <<<"$out")")" 2
    expect_eq "launcher: the launcher sees all of them" "$(value CUDA_VISIBLE_DEVICES "$(head -1 <<<"$out")" | tr ',' '\n' | wc -l)" 2
fi
out=$(srun_t --ddp=launcher -N2 -n3 "$dir/kv.sh" 2>&1) && fail "launcher with 2 tasks on a node ran" || \
    expect_contains "launcher: refused with 2 tasks on a node" "$out" "--ddp=launcher needs one task per node"
out=$(srun_t --ddp=launcher,rank-order=node -N1 -n1 true 2>&1) && fail "launcher,rank-order=node accepted" || \
    expect_contains "launcher,rank-order=node refused by srun" "$out" "drop rank-order"

if "$PY" -c 'import torch.distributed' 2>/dev/null && command -v torchrun >/dev/null; then
    # Debian's torch 1.13 on Python 3.11 needs --redirects/--tee to start (see SLURM_NOTES).
    out=$(cd "$dir" && SRUN_TIMEOUT=240 PET_REDIRECTS=1 PET_TEE=1 srun_t --ddp=launcher,nproc=2 -N2 \
          --ntasks-per-node=1 torchrun "$TRAINER" --epochs 2 2>&1) || fail "torchrun under --ddp=launcher failed: $out"
    expect_contains "torchrun per node: 4 ranks across 2 nodes" "$out" "[rank 0/4]"
    expect_contains "torchrun per node: identical weights" "$out" "OK: 4 ranks hold identical weights"
else
    echo "note: torch or torchrun missing, launcher training not run"
fi

# ---- torchelastic and torchrun's worker defaults ---------------------------------------------
if "$PY" -c 'import torch.distributed' 2>/dev/null; then
    CHECK='import torch.distributed as d, os; print("te", os.environ["SLURM_PROCID"], d.is_torchelastic_launched(), os.environ.get("TORCHELASTIC_RUN_ID"))'
    out=$(srun_t --ddp=torchelastic -N2 -n2 "$PY" -c "$CHECK")
    expect_eq "torchelastic: is_torchelastic_launched() on both ranks" "$(grep -c '^te [01] True' <<<"$out")" 2
    expect_contains "torchelastic: TORCHELASTIC_RUN_ID=job.step" "$out" "True $(sed -n 's/^te 0 True //p' <<<"$out")"
    out=$(srun_t --ddp -N2 -n2 "$PY" -c "$CHECK")
    expect_eq "without torchelastic: is_torchelastic_launched() false" "$(grep -c '^te [01] False None' <<<"$out")" 2
fi
out=$(srun_t --ddp=torchelastic -N1 -n1 "$dir/kv.sh" TORCHELASTIC_RUN_ID TORCHELASTIC_RESTART_COUNT TORCHELASTIC_MAX_RESTARTS TORCHELASTIC_USE_AGENT_STORE)
expect_contains "torchelastic: restart count, max restarts, no agent store" "$out" "TORCHELASTIC_RESTART_COUNT=0 TORCHELASTIC_MAX_RESTARTS=0 TORCHELASTIC_USE_AGENT_STORE=unset"
out=$(srun_t --ddp -N1 -n1 "$dir/kv.sh" TORCH_NCCL_ASYNC_ERROR_HANDLING NCCL_ASYNC_ERROR_HANDLING)
expect_contains "worker defaults: the current name only (2.2+ warns on the old one)" "$out" "TORCH_NCCL_ASYNC_ERROR_HANDLING=1 NCCL_ASYNC_ERROR_HANDLING=unset"
out=$(NCCL_ASYNC_ERROR_HANDLING=0 srun_t --ddp -N1 -n1 "$dir/kv.sh" TORCH_NCCL_ASYNC_ERROR_HANDLING NCCL_ASYNC_ERROR_HANDLING)
expect_contains "worker defaults: the user's old name wins, new name not added" "$out" "TORCH_NCCL_ASYNC_ERROR_HANDLING=unset NCCL_ASYNC_ERROR_HANDLING=0"
out=$(srun_t -N1 -n1 "$dir/kv.sh" TORCH_NCCL_ASYNC_ERROR_HANDLING TORCHELASTIC_RUN_ID PET_NNODES SLURM_DDP_PORTS)
expect_contains "without --ddp: none of them" "$out" "TORCH_NCCL_ASYNC_ERROR_HANDLING=unset TORCHELASTIC_RUN_ID=unset PET_NNODES=unset SLURM_DDP_PORTS=unset"

# ---- rank-order=node under -m cyclic and -m plane=2 -------------------------------------------
# check_node_order WHAT OUTPUT NTASKS: RANK = tasks on earlier nodes + SLURM_LOCALID, all distinct,
# and the verbose table's RANK/HOST rows match what the tasks got.
check_node_order() {
    local what=$1 out=$2 n=$3 problems
    problems=$(awk -v N="$n" '
        $1 == "kv" { lines++; split($6, kv, "="); rank = kv[2]; node[$2] = $3; local_[$2] = $4; host[rank] = $5
                     count[$3]++; rk[$2] = rank; if (rank in seen) printf "RANK %s twice\n", rank; seen[rank] = 1
                     if (rank == "unset") printf "task %s: no RANK\n", $2 }
        $1 ~ /^[0-9]+$/ && NF >= 4 { table[$1] = $2 }
        END { if (lines != N) printf "%d lines, expected %d\n", lines, N
              for (p in rk) { before = 0; for (k = 0; k < node[p]; k++) before += count[k]
                              if (rk[p] != before + local_[p]) printf "task %s on node %s local %s: RANK %s, expected %d\n", p, node[p], local_[p], rk[p], before + local_[p] }
              for (k in host) if (table[k] != host[k]) printf "table says rank %s on %s, the task ran on %s\n", k, table[k], host[k] }' <<<"$out")
    if [ -z "$problems" ]; then pass "$what"; else fail "$what:"; echo "$problems"; echo "$out"; fi
}
out=$(srun_t --ddp=rank-order=node,verbose -N2 -n5 -m cyclic "$dir/kv.sh" RANK 2>&1)
check_node_order "rank-order=node, -m cyclic, 5 tasks on 2 nodes" "$out" 5
out=$(srun_t --ddp=rank-order=node,verbose -N2 -n6 -m plane=2 "$dir/kv.sh" RANK 2>&1)
check_node_order "rank-order=node, -m plane=2, 6 tasks on 2 nodes" "$out" 6
out=$(srun_t --ddp -N2 -n4 -m cyclic "$dir/kv.sh" RANK | kv)
expect_eq "rank-order=block (default) under cyclic: RANK=SLURM_PROCID" \
    "$(awk '{split($6, r, "="); if (r[2] != $2) bad++} END {print bad + 0}' <<<"$out")" 0
if "$PY" -c 'import torch.distributed' 2>/dev/null; then
    out=$(SRUN_TIMEOUT=180 srun_t --ddp=rank-order=node -N2 -n4 -m cyclic "$PY" "$TRAINER" --epochs 1 2>&1) \
        || fail "trainer under rank-order=node failed: $out"
    expect_contains "rank-order=node: gloo trains under -m cyclic" "$out" "OK: 4 ranks hold identical weights"
fi

# ---- port blocks ------------------------------------------------------------------------------
cat >"$dir/ports.sh" <<EOS
#!/bin/bash
#SBATCH -N2 --ntasks-per-node=2
srun --ddp -N2 -n2 $dir/kv.sh SLURM_DDP_PORTS MASTER_PORT SLURM_STEP_ID &
srun --ddp -N2 -n2 $dir/kv.sh SLURM_DDP_PORTS MASTER_PORT SLURM_STEP_ID &
wait
EOS
out=$(sbatch_out "$dir/ports.sh")
blocks=$(grep '^kv ' <<<"$out" | tr ' ' '\n' | sed -n 's/^SLURM_DDP_PORTS=//p' | sort -u)
# Where Slurm reserves ports for every step (MpiParams=ports=), the default block is Slurm's run.
size=4; grep -q "^MpiParams=ports=" "$SDDP_CLUSTER_DIR/slurm.conf" 2>/dev/null && size=any
problems=$(awk -F- -v want="$size" '{ lo[NR] = $1; hi[NR] = $2; n = NR }
    END { if (n != 2) printf "%d distinct blocks, expected 2\n", n
          if (n == 2 && !(hi[1] < lo[2] || hi[2] < lo[1])) printf "blocks %s-%s and %s-%s overlap\n", lo[1], hi[1], lo[2], hi[2]
          for (i = 1; i <= n; i++) { s = hi[i] - lo[i] + 1; if (want != "any" && s != want) printf "block %s-%s has %d ports\n", lo[i], hi[i], s } }' <<<"$blocks")
if [ -z "$problems" ]; then pass "two concurrent steps: disjoint port blocks ($(tr '\n' ' ' <<<"$blocks"))"
else fail "port blocks:"; echo "$problems"; echo "$out"; fi
expect_contains "MASTER_PORT is the first port of the block" "$out" "SLURM_DDP_PORTS=$(head -1 <<<"$blocks") MASTER_PORT=$(cut -d- -f1 <<<"$(head -1 <<<"$blocks")")"
out=$(srun_t --ddp=port=29500,ports=3 -N1 -n1 "$dir/kv.sh" SLURM_DDP_PORTS)
expect_contains "port=29500,ports=3" "$out" "SLURM_DDP_PORTS=29500-29502"
out=$(srun_t --ddp=ports=0 -N1 -n1 true 2>&1) && fail "ports=0 accepted" || \
    expect_contains "ports=0 refused by srun" "$out" "from 1 to 256"
if grep -q "^MpiParams=ports=" "$SDDP_CLUSTER_DIR/slurm.conf" 2>/dev/null; then
    out=$(srun_t --ddp --resv-ports=4 -N1 -n1 "$dir/kv.sh" SLURM_DDP_PORTS SLURM_STEP_RESV_PORTS)
    expect_eq "reserved ports: the block is Slurm's" "$(value SLURM_DDP_PORTS "$out")" "$(value SLURM_STEP_RESV_PORTS "$out")"
    out=$(srun_t --ddp -N2 -n2 "$dir/kv.sh" SLURM_DDP_PORTS SLURM_STEP_RESV_PORTS | kv)
    expect_eq "reserved ports Slurm chose unasked: the default block is Slurm's" \
        "$(value SLURM_DDP_PORTS "$(head -1 <<<"$out")")" "$(value SLURM_STEP_RESV_PORTS "$(head -1 <<<"$out")")"
    out=$(srun_t --ddp=ports=4 --resv-ports=2 -N1 -n1 true 2>&1) && fail "2 reserved ports for ports=4 accepted" || \
        expect_contains "reserved ports fewer than ports=4: names --resv-ports" "$out" "--resv-ports=4"
fi

# ---- net-hints: GLOO_SOCKET_IFNAME ------------------------------------------------------------
IFCHECK='echo "if $SLURM_PROCID ${GLOO_SOCKET_IFNAME:-unset} $(ip -o -4 addr show | awk -v h="$(getent hosts "$(hostname)" | cut -d" " -f1)" "\$4 ~ \"^\" h \"/\" {print \$2}")"'
out=$(srun_t --ddp=net-hints -N2 -n2 bash -c "$IFCHECK" | sort -k2n)
problems=$(awk '$1 == "if" { n++; if ($3 == "unset" || $3 == "lo" || $3 != $4) printf "rank %s: GLOO_SOCKET_IFNAME=%s, node address on %s\n", $2, $3, $4 } END { if (n != 2) print n " lines" }' <<<"$out")
if [ -z "$problems" ]; then pass "net-hints: GLOO_SOCKET_IFNAME is the interface of the node's address ($(awk '{print $3}' <<<"$out" | tr '\n' ' '))"
else fail "net-hints:"; echo "$problems"; echo "$out"; fi
out=$(GLOO_SOCKET_IFNAME=mine srun_t --ddp=nccl-hints -N2 -n2 "$dir/kv.sh" GLOO_SOCKET_IFNAME | kv)
expect_eq "net-hints (as nccl-hints) keeps the user's GLOO_SOCKET_IFNAME" "$(grep -c 'GLOO_SOCKET_IFNAME=mine' <<<"$out")" 2

# ---- debug ------------------------------------------------------------------------------------
out=$(cd "$dir" && srun_t --ddp=debug,verbose -N2 -n2 "$dir/kv.sh" NCCL_DEBUG NCCL_DEBUG_FILE TORCH_DISTRIBUTED_DEBUG SLURM_JOB_ID SLURM_STEP_ID 2>&1)
l1=$(kv <<<"$out" | sed -n 2p)
sdir="$dir/slurm-ddp-debug/$(value SLURM_JOB_ID "$l1").$(value SLURM_STEP_ID "$l1")"
expect_eq "debug: NCCL_DEBUG_FILE per rank in the step's directory" "$(value NCCL_DEBUG_FILE "$l1")" "$sdir/nccl.rank1.log"
expect_contains "debug: NCCL_DEBUG and TORCH_DISTRIBUTED_DEBUG" "$l1" "NCCL_DEBUG=INFO"
[ -d "$sdir" ] && pass "debug: the step's directory exists" || fail "debug: no directory $sdir"
expect_contains "debug: the verbose table says where" "$out" "debug: NCCL/torch diagnostics in $sdir"
out=$(cd "$dir" && NCCL_DEBUG=WARN srun_t --ddp=debug=$dir/d2 -N1 -n1 "$dir/kv.sh" NCCL_DEBUG)
expect_contains "debug=DIR keeps the user's NCCL_DEBUG" "$out" "NCCL_DEBUG=WARN"
# ---- a container hook's MASTER_PORT (pyxis + enroot's PyTorch hook) ----------------------------
if command -v gcc >/dev/null && [ -f /usr/include/slurm/spank.h ]; then
    gcc -shared -fPIC -o "$dir/hook.so" "$SDDP_SOURCE_DIR/tests/integration/fake_container_hook.c"
    ddp_line=$(grep -v '^#' "$SDDP_CLUSTER_DIR/plugstack.conf" | grep spank_ddp)
    printf 'required %s\n%s\n' "$dir/hook.so" "$ddp_line" >"$SDDP_CLUSTER_DIR/plugstack.conf"
    out=$(srun_t --ddp -N2 -n2 "$dir/kv.sh" FAKE_CONTAINER_HOOK MASTER_PORT SLURM_DDP_PORTS SLURM_JOB_ID | kv)
    l0=$(head -1 <<<"$out")
    hook_port=$(( $(value SLURM_JOB_ID "$l0") % 4536 + 61000 ))
    expect_eq "container hook ran first" "$(value FAKE_CONTAINER_HOOK "$l0")" ran
    # Replaced, not kept as if the user had exported it (the block would then start there).
    got=$(value MASTER_PORT "$l0")
    [ "$got" != "$hook_port" ] && [ "$got" = "$(value SLURM_DDP_PORTS "$l0" | cut -d- -f1)" ] \
        && pass "the hook's MASTER_PORT ($hook_port) is replaced by the step's block ($got)" \
        || fail "the hook's MASTER_PORT ($hook_port) was kept: MASTER_PORT=$got SLURM_DDP_PORTS=$(value SLURM_DDP_PORTS "$l0")"
    out=$(srun_t -N1 -n1 "$dir/kv.sh" FAKE_CONTAINER_HOOK MASTER_PORT SLURM_JOB_ID)
    expect_eq "without --ddp the hook's value stays" "$(value MASTER_PORT "$out")" \
        "$(( $(value SLURM_JOB_ID "$out") % 4536 + 61000 ))"
    use_plugin
fi

# ---- slurm-ddp env shows the same ------------------------------------------------------------
CLI="$SDDP_BUILD_DIR/tools/slurm-ddp"
out=$(srun_t -N2 --ntasks-per-node=1 "$CLI" env --options=launcher,nproc=2,torchelastic --table 2>&1)
expect_contains "slurm-ddp env --options=launcher: PET_NPROC_PER_NODE" "$out" "PET_NPROC_PER_NODE=2"
expect_contains "slurm-ddp env --options=torchelastic" "$out" "TORCHELASTIC_MAX_RESTARTS=0"
expect_eq "slurm-ddp env --options=launcher: no RANK" "$(grep -c '^RANK=' <<<"$out")" 0
expect_contains "slurm-ddp env --table notes the launcher" "$out" "launcher: PET_NNODES=2"
finish
