#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Where rank 0 is not on the first node of the list: arbitrary distribution with a host file,
# and heterogeneous steps spanning components.
source "$(dirname "$0")/lib.sh"
dir=$(mktemp -d /tmp/sddp-place.XXXXXX)
trap 'rm -rf "$dir"; use_plugin' EXIT

printf 'n2\nn1\nn2\n' >"$dir/hosts"
out=$(SLURM_HOSTFILE="$dir/hosts" srun_t --ddp --distribution=arbitrary -n3 "$PRINTER")
check_world "$out" 3 2 n2
expect_eq "arbitrary: rank 0 runs on n2" "$(field_of_rank 0 13 "$out")" n2

# Heterogeneous job: one step across both components is one world (Slurm presents the combined
# step's PROCID/NODEID/node list); separate steps of the components get different ports.
out=$(timeout "$SRUN_TIMEOUT" salloc -N1 -n2 : -N1 -n1 bash -c \
    "srun --ddp --het-group=0,1 $PRINTER; srun --ddp --het-group=0 $PRINTER & srun --ddp --het-group=1 $PRINTER & wait" 2>/dev/null)
lines=$(grep '^task' <<<"$out")
check_world "$(head -3 <<<"$lines")" 3 2 n1
expect_eq "het: separate component steps get distinct ports" \
    "$(tail -3 <<<"$lines" | awk '{print $12}' | sort -u | wc -l)" 2
finish
