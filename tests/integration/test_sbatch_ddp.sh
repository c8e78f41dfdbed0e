#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# #SBATCH --ddp reaches every srun step of the script; concurrent steps and jobs get distinct
# ports; --ddp=verbose prints one table from rank 0.
source "$(dirname "$0")/lib.sh"
dir=$(mktemp -d /tmp/sddp-sbatch.XXXXXX)
trap 'rm -rf "$dir"; use_plugin' EXIT

# A bare "#SBATCH --ddp" arrives in srun as the string "(null)".
cat >"$dir/job.sh" <<EOS
#!/bin/bash
#SBATCH -N2
#SBATCH --ntasks-per-node=2
#SBATCH --ddp
echo "batch RANK=\${RANK:-unset}"
srun $PRINTER
srun -N2 -n2 $PRINTER &
srun -N2 -n2 $PRINTER &
wait
EOS
out=$(sbatch_out "$dir/job.sh")
expect_contains "batch script untouched" "$out" "batch RANK=unset"
lines=$(grep '^task' <<<"$out")
check_world "$(head -4 <<<"$lines")" 4 2 n1
ports=$(tail -4 <<<"$lines" | awk '{print $12}' | sort -u | wc -l)
expect_eq "two concurrent steps of one job: two distinct MASTER_PORTs" "$ports" 2

# Options given to sbatch apply to the steps.
cat >"$dir/opts.sh" <<EOS
#!/bin/bash
#SBATCH -N2 -n2
#SBATCH --ddp=port=24680,verbose
srun $PRINTER
EOS
out=$(sbatch_out "$dir/opts.sh")
expect_eq "#SBATCH --ddp=port=... reaches srun" "$(field_of_rank 1 12 "$out")" 24680
expect_contains "verbose: table header from rank 0" "$out" "WORLD_SIZE=2 on 2 node(s)"
expect_eq "verbose: exactly one table" "$(grep -c 'RANK  HOST' <<<"$out")" 1

# Two jobs sharing node n1 at the same time get different ports. Each job's task waits for the
# other's to exist (bounded), so "both-running" in both outputs shows the two steps overlapped;
# ports of steps that ran one after the other could legitimately be equal.
overlap_task() {  # overlap_task MINE OTHER
    echo "$PRINTER; touch $dir/$1.up; for i in \$(seq 300); do" \
        "[ -e $dir/$2.up ] && { echo both-running; break; }; sleep 0.1; done"
}
timeout "$SRUN_TIMEOUT" sbatch --wait -w n1 -N1 -n1 -o "$dir/j1" --ddp \
    --wrap "srun bash -c '$(overlap_task j1 j2)'" >/dev/null &
w1=$!
timeout "$SRUN_TIMEOUT" sbatch --wait -w n1 -N1 -n1 -o "$dir/j2" --ddp \
    --wrap "srun bash -c '$(overlap_task j2 j1)'" >/dev/null &
w2=$!
rc1=0 rc2=0
wait $w1 || rc1=$?
wait $w2 || rc2=$?
expect_eq "two jobs on one node: both ended well" "$rc1 $rc2" "0 0"
for j in j1 j2; do
    expect_contains "two jobs on one node: $j ran while the other was running" \
        "$(cat "$dir/$j" 2>/dev/null)" both-running
done
p1=$(awk '$1 == "task" {print $12}' "$dir/j1")
p2=$(awk '$1 == "task" {print $12}' "$dir/j2")
if [ -n "$p1" ] && [ -n "$p2" ] && [ "$p1" != "$p2" ]; then pass "two jobs on one node: ports $p1 and $p2"
else fail "two jobs on one node: ports '$p1' and '$p2'"; fi

# A job without --ddp: its steps are untouched.
out=$(sbatch_out -N1 -n1 --wrap "srun $PRINTER")
expect_eq "job without --ddp: RANK unset" "$(awk '$1 == "task" {print $3}' <<<"$out")" unset
finish
