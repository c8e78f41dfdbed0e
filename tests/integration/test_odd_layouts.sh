#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Layouts Slurm really produces, measured on the local cluster: heterogeneous components out of
# node order, arbitrary distribution with host*count and with -w overriding SLURM_HOSTFILE,
# -m plane=N, exported empty values, one port per step, and OMP_NUM_THREADS without binding.
source "$(dirname "$0")/lib.sh"
# A failing step is an outcome the checks below report, so every capture ends in `|| true`.
dir=$(mktemp -d /tmp/sddp-odd.XXXXXX)
holder=
trap 'rm -rf "$dir"; [ -n "$holder" ] && kill "$holder" 2>/dev/null; use_plugin' EXIT

# Heterogeneous job, components out of node order: n2 runs ranks 0-1, n1 rank 2. Slurm sorts the
# step's node list (n1 first) but SLURM_NODEID follows the components.
out=$(timeout "$SRUN_TIMEOUT" salloc -w n2 -n2 : -w n1 -n1 \
    srun --ddp --het-group=0,1 "$PRINTER" 2>&1) || true
lines=$(grep '^task' <<<"$out" || true)
check_world "$lines" 3 2 n2
expect_eq "het out of order: rank 0 and 1 on n2, LOCAL_WORLD_SIZE 2" \
    "$(field_of_rank 0 13 "$lines") $(field_of_rank 1 13 "$lines") $(field_of_rank 0 6 "$lines")" "n2 n2 2"
expect_eq "het out of order: rank 2 on n1, LOCAL_WORLD_SIZE 1, NODE_RANK 1" \
    "$(field_of_rank 2 13 "$lines") $(field_of_rank 2 6 "$lines") $(field_of_rank 2 7 "$lines")" "n1 1 1"

# The same job from a job script: sbatch exports the components' node lists only as
# SLURM_JOB_NODELIST_HET_GROUP_<i> (salloc as SLURM_NODELIST_HET_GROUP_<i>).
printf '#!/bin/bash\n#SBATCH -w n2 -n2\n#SBATCH hetjob\n#SBATCH -w n1 -n1\nsrun --ddp --het-group=0,1 %s\n' \
    "$PRINTER" >"$dir/het.sbatch"
out=$(sbatch_out "$dir/het.sbatch" 2>&1) || true
lines=$(grep '^task' <<<"$out" || true)
[ -n "$lines" ] || echo "$out" | head -5
check_world "$lines" 3 2 n2
expect_eq "het from sbatch: ranks 0 and 1 on n2, rank 2 on n1" \
    "$(field_of_rank 0 13 "$lines") $(field_of_rank 1 13 "$lines") $(field_of_rank 2 13 "$lines")" "n2 n2 n1"

# Arbitrary distribution with Slurm's host*count syntax.
printf 'n2*2\nn1\n' >"$dir/hosts"
out=$(SLURM_HOSTFILE="$dir/hosts" srun_t --ddp --distribution=arbitrary -n3 "$PRINTER") || true
check_world "$out" 3 2 n2

# -w n2,n1,n1 orders the tasks and Slurm ignores SLURM_HOSTFILE, yet exports it: a stale file
# (n1 first) must be refused, never used for MASTER_ADDR.
printf 'n1\nn2\n' >"$dir/stale"
start=$(date +%s)
out=$(SLURM_HOSTFILE="$dir/stale" srun_t --ddp --distribution=arbitrary -w n2,n1,n1 -n3 "$PRINTER" 2>&1) && rc=0 || rc=$?
expect_eq "stale host file under -w: the step fails" "$([ "$rc" -ne 0 ] && echo failed)" failed
expect_contains "stale host file under -w: the reason" "$out" "-w or --nodefile"
expect_not_contains "stale host file under -w: no task runs with MASTER_ADDR=n1" "$out" "task 0 0"
# Without any host file the same layout is a refusal naming the fix.
out=$(env -u SLURM_HOSTFILE timeout "$SRUN_TIMEOUT" srun --ddp --distribution=arbitrary -w n2,n1,n1 -n3 "$PRINTER" 2>&1) || true
expect_contains "-w without a host file: refusal naming --ddp=addr" "$out" "--ddp=addr=HOST"
# A FIFO as SLURM_HOSTFILE: refused at once, not a hang waiting for a writer.
mkfifo "$dir/fifo"
start=$(date +%s)
out=$(SLURM_HOSTFILE="$dir/fifo" srun_t --ddp --distribution=arbitrary -w n2,n1,n1 -n3 "$PRINTER" 2>&1) || true
expect_contains "FIFO host file: refused" "$out" "is not a regular file"
expect_eq "FIFO host file: refused within 20 s" "$(( $(date +%s) - start < 20 ))" 1
# (Not opening the file at all under other distributions is a unit test: srun itself opens
# SLURM_HOSTFILE when it is set, and blocks on a FIFO.)

# -m plane=2 reaches tasks as SLURM_DISTRIBUTION=plane + SLURM_DIST_PLANESIZE=2: ranks 0,1 on n1,
# 2 on n2, 3,4 on n1 (Slurm packs 4 + 1). The verbose table shows that.
out=$(srun_t --ddp=verbose -N2 -n5 -m plane=2 "$PRINTER" 2>&1) || true
check_world "$(grep '^task' <<<"$out")" 5 2 n1
table=$(awk '$1 ~ /^[0-9]+$/ && NF >= 4 { print $1 ":" $2 }' <<<"$out" | sort | tr '\n' ' ')
expect_eq "plane table: host of each rank" "$table" "0:n1 1:n1 2:n2 3:n1 4:n1 "
expect_eq "plane: hosts of the tasks" \
    "$(for r in 0 1 2 3 4; do field_of_rank $r 13 "$(grep '^task' <<<"$out")"; done | tr '\n' ' ')" "n1 n1 n2 n1 n1 "

# Exported but empty: empty means unset, the task gets what --ddp derived (and the table shows).
out=$(MASTER_PORT= MASTER_ADDR= srun_t --ddp=verbose -N2 -n2 "$PRINTER" 2>&1) || true
check_world "$(grep '^task' <<<"$out")" 2 2 n1
shown=$(grep -o "MASTER_PORT=[0-9]*" <<<"$out" | head -1 | cut -d= -f2) || true
expect_eq "empty MASTER_PORT: the task gets the port the table shows" \
    "$(field_of_rank 1 12 "$(grep '^task' <<<"$out")")" "${shown:-none}"
out=$(OMP_NUM_THREADS= srun_t --ddp -n1 bash -c 'echo "omp=${OMP_NUM_THREADS:-unset}"') || true
expect_contains "empty OMP_NUM_THREADS is set" "$out" "omp=1"

# OMP_NUM_THREADS without binding and without --cpus-per-task: the step's CPUs on the node
# divided by its tasks there (at least 1), never every CPU to every task.
out=$(srun_t --ddp -N1 -n4 --cpu-bind=none bash -c \
    'echo "omp $OMP_NUM_THREADS $SLURM_CPUS_ON_NODE $(nproc)"') || true
bad=$(awk '$1 == "omp" { share = int($3 / 4); if (share < 1) share = 1
                          want = share < $4 ? share : $4
                          if ($2 != want) print "OMP_NUM_THREADS=" $2 ", expected " want " (" $3 " CPUs, 4 tasks, " $4 " visible)" }' <<<"$out")
expect_eq "OMP_NUM_THREADS is the task's share of the node ($(head -1 <<<"$out"))" "$bad" ""

# A busy port on rank 0's node: a fast error naming the port and the fixes, not a silent wait.
port=24617
srun_t -w n1 -n1 python3 -c "
import socket, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('0.0.0.0', $port)); s.listen(); print('held', flush=True); time.sleep(40)" >"$dir/holder" 2>&1 &
holder=$!
for _ in $(seq 1 100); do grep -q held "$dir/holder" && break; sleep 0.2; done
start=$(date +%s)
out=$(srun_t --ddp=port=$port -w n1 -n2 "$PRINTER" 2>&1) && rc=0 || rc=$?
took=$(( $(date +%s) - start ))
expect_eq "busy port: the step fails" "$([ "$rc" -ne 0 ] && echo failed)" failed
expect_contains "busy port: names the port" "$out" "MASTER_PORT=$port"
expect_contains "busy port: names --resv-ports" "$out" "--resv-ports"
expect_eq "busy port: fails within 20 s (took ${took}s)" "$(( took < 20 ))" 1
kill "$holder" 2>/dev/null || true
wait "$holder" 2>/dev/null || true
holder=
finish
