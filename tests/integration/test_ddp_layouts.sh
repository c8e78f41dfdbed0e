#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# srun --ddp sets a correct torchrun environment for block, cyclic and uneven layouts on 2 nodes.
source "$(dirname "$0")/lib.sh"

out=$(srun_t --ddp -N2 --ntasks-per-node=4 "$PRINTER")
check_world "$out" 8 2 n1
expect_eq "rank 5 is on n2 with LOCAL_RANK 1" "$(field_of_rank 5 13 "$out") $(field_of_rank 5 4 "$out")" "n2 1"

out=$(srun_t --ddp -N2 -n5 "$PRINTER")             # uneven: Slurm packs 4 + 1
check_world "$out" 5 2 n1
expect_eq "uneven block: LOCAL_WORLD_SIZE of rank 0 and rank 4" \
    "$(field_of_rank 0 6 "$out") $(field_of_rank 4 6 "$out")" "4 1"
out=$(srun_t --ddp -N2 -n5 --distribution=cyclic "$PRINTER")
check_world "$out" 5 2 n1
expect_eq "cyclic: rank 1 runs on n2" "$(field_of_rank 1 13 "$out")" "n2"

out=$(srun_t --ddp -N2 -n6 --distribution=plane=2 "$PRINTER")
check_world "$out" 6 2 n1

out=$(srun_t --ddp -N1 -n3 "$PRINTER")
check_world "$out" 3 1 n1

# A step on the second node only: the master is that node, not the allocation's first.
out=$(sbatch_out -N2 --ntasks-per-node=2 --wrap "srun --ddp -N1 -n2 -r1 $PRINTER")
check_world "$out" 2 1 n2

# Options reach the environment.
out=$(srun_t --ddp=port=23456,addr-suffix=-fabric -N2 -n2 "$PRINTER")
expect_eq "port option" "$(field_of_rank 1 12 "$out")" 23456
expect_eq "addr-suffix option" "$(field_of_rank 1 11 "$out")" n1-fabric

# Ports Slurm reserves for steps come first (a cluster started with RESV_PORTS=12000-12999 has
# MpiParams=ports=...; the default cluster reserves none, so the derived ports are tested above).
config=$(scontrol show config)
if grep -Eq 'MpiParams *= *ports=' <<<"$config"; then
    out=$(srun_t --ddp --resv-ports=1 -N2 -n2 "$PRINTER")
    port=$(field_of_rank 1 12 "$out")
    if [ "$port" -ge 12000 ] && [ "$port" -le 12999 ]; then pass "reserved port $port used"; else fail "reserved port: got '$port'"; fi
fi

# User-exported MASTER_ADDR/PORT are kept; --ddp=override replaces them.
out=$(MASTER_ADDR=mine MASTER_PORT=24000 srun_t --ddp -N2 -n2 "$PRINTER")
expect_eq "user MASTER_ADDR/PORT kept" "$(field_of_rank 1 11 "$out") $(field_of_rank 1 12 "$out")" "mine 24000"
out=$(MASTER_ADDR=mine MASTER_PORT=24000 srun_t --ddp=override -N2 -n2 "$PRINTER")
expect_eq "override replaces them" "$(field_of_rank 1 11 "$out")" n1

# torchrun-only variables that change framework behaviour are never set.
out=$(srun_t --ddp -n1 env)
expect_not_contains "no TORCHELASTIC_* variables" "$out" TORCHELASTIC
finish
