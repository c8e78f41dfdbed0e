#!/bin/bash
# Where rank 0 is not on the first node of the list: arbitrary distribution with a host file,
# and heterogeneous steps spanning components.
source "$(dirname "$0")/lib.sh"
dir=$(mktemp -d /tmp/sddp-place.XXXXXX)
trap 'rm -rf "$dir"; use_plugin' EXIT

printf 'n2\nn1\nn2\n' >"$dir/hosts"
out=$(SLURM_HOSTFILE="$dir/hosts" srun_t --ddp --distribution=arbitrary -n3 "$PRINTER")
check_world "$out" 3 2 n2
expect_eq "arbitrary: rank 0 runs on n2" "$(field_of_rank 0 13 "$out")" n2

finish
