#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# mpi4py (the PyPI wheel, which loads Debian's Open MPI) under `srun --mpi=pmix --ddp`: MPI's
# allreduce is right on every rank, and --ddp's RANK is the MPI rank, also with a cyclic layout.
source "$(dirname "$0")/stack_lib.sh"
VENV=$(stack_env torch)
srun --mpi=list 2>&1 | grep -qw pmix || skip "this Slurm has no mpi/pmix plugin (srun --mpi=list)"

# check_mpi WHAT OUTPUT: the MPI side of the STACK lines (check_stack does the torch side).
check_mpi() {
    local bad
    bad=$(awk '/^STACK / { for (i = 3; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
            if (f["mpi_ok"] != "yes" || f["env_rank"] != f["rank"] || f["torch_rank"] != f["rank"] ||
                f["env_world"] != 4 || f["torch_sum"] != 10 || f["mpi_lib"] !~ /^Open_MPI_v4/) print }' <<<"$2")
    if [ -z "$bad" ]; then pass "$1: MPI allreduce right on every rank, RANK = MPI rank = torch rank, Open MPI 4"
    else fail "$1:"; echo "$bad"; fi
}

for dist in block cyclic; do
    out=$(SRUN_TIMEOUT=150 srun_t --mpi=pmix --ddp -N2 --ntasks-per-node=2 -m "$dist" \
        "$VENV/bin/python" "$FW_DIR/mpi_allreduce.py" 2>&1) ||
        { fail_run "srun --mpi=pmix --ddp -m $dist mpi_allreduce.py" $? "$out"; continue; }
    check_stack "mpi4py + torch gloo under srun --mpi=pmix --ddp -m $dist" "$out" 4
    check_mpi "mpi4py under srun --mpi=pmix --ddp -m $dist" "$out"
done
finish
