#!/bin/bash
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

# Two jobs sharing node n1 at the same time get different ports.
j1=$(sbatch --parsable -w n1 -N1 -n1 -o "$dir/j1" --ddp --wrap "srun $PRINTER; sleep 2")
j2=$(sbatch --parsable -w n1 -N1 -n1 -o "$dir/j2" --ddp --wrap "srun $PRINTER; sleep 2")
for _ in $(seq 100); do [ -s "$dir/j1" ] && [ -s "$dir/j2" ] && break; sleep 0.2; done
p1=$(awk '$1 == "task" {print $12}' "$dir/j1")
p2=$(awk '$1 == "task" {print $12}' "$dir/j2")
if [ -n "$p1" ] && [ -n "$p2" ] && [ "$p1" != "$p2" ]; then pass "two jobs on one node: ports $p1 and $p2"
else fail "two jobs on one node: ports '$p1' and '$p2' (jobs $j1 $j2)"; fi
scancel "$j1" "$j2" 2>/dev/null || true

# A job without --ddp: its steps are untouched.
out=$(sbatch_out -N1 -n1 --wrap "srun $PRINTER")
expect_eq "job without --ddp: RANK unset" "$(awk '$1 == "task" {print $3}' <<<"$out")" unset
finish
