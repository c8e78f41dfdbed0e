#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# --ddp=hostfile: every task finds SLURM_DDP_HOSTFILE, a readable file of `host slots=N` lines
# (the DeepSpeed/MPI/Horovod format) with rank 0's node first and each node's task count, for the
# whole step on every node (also after another node's tasks ended), and the file is gone after the
# step. Plain --ddp sets no host file.
source "$(dirname "$0")/stack_lib.sh"
dir=$(stack_tmp)
trap 'rm -rf "$dir"; use_plugin' EXIT
t0=$(date +%s)

# One line per task: hf RANK HOST path=P content=LINE1;LINE2; (MISSING if absent or unreadable).
# Rank 0 reads the file again after the other node's tasks have ended, so a file one node
# removes at its step end under a name the other node shares would show as MISSING there.
cat >"$dir/hf.sh" <<'EOS'
#!/bin/bash
p=${SLURM_DDP_HOSTFILE:-}
content() { if [ -n "$p" ] && [ -r "$p" ]; then tr '\n' ';' <"$p"; else echo MISSING; fi; }
echo "hf $SLURM_PROCID $(hostname) path=${p:-unset} content=$(content)"
if [ "$SLURM_PROCID" = 0 ]; then sleep 4; echo "late $SLURM_PROCID $(hostname) path=${p:-unset} content=$(content)"; fi
EOS
chmod +x "$dir/hf.sh"

# check_hostfile WHAT OUTPUT NTASKS EXPECTED_CONTENT
check_hostfile() {
    local what=$1 out=$2 n=$3 want=$4 lines paths p gone
    lines=$(grep '^hf ' <<<"$out" || true)
    expect_eq "$what: one line per task" "$(wc -l <<<"$lines")" "$n"
    expect_eq "$what: every task read the same host file, rank 0's node first" \
        "$(sed 's/.* content=//' <<<"$lines" | sort | uniq -c | sed 's/^ *//')" "$n $want"
    expect_eq "$what: still there for rank 0 after the other node's tasks ended" \
        "$(grep '^late ' <<<"$out" | sed 's/.* content=//')" "$want"
    paths=$(awk '{sub("path=", "", $4); print $4}' <<<"$lines" | sort -u)
    # slurmstepd removes it in its exit hook, which may finish just after srun returns.
    gone=no
    for _ in $(seq 50); do
        gone=yes
        for p in $paths; do if [ "$p" = unset ] || [ -e "$p" ]; then gone=no; fi; done
        [ "$gone" = yes ] && break
        sleep 0.2
    done
    expect_eq "$what: host file(s) removed after the step ($(tr '\n' ' ' <<<"$paths"))" "$gone" yes
}

out=$(srun_t -N2 -n3 --ddp=hostfile "$dir/hf.sh" 2>&1) || fail "srun --ddp=hostfile failed: $out"
check_hostfile "hostfile -N2 -n3" "$out" 3 "n1 slots=2;n2 slots=1;"

printf 'n2\nn1\nn1\n' >"$dir/hosts"
out=$(SLURM_HOSTFILE="$dir/hosts" srun_t -n3 --distribution=arbitrary --ddp=hostfile "$dir/hf.sh" 2>&1) ||
    fail "srun --ddp=hostfile --distribution=arbitrary failed: $out"
check_hostfile "hostfile, rank 0 on n2 (arbitrary)" "$out" 3 "n2 slots=1;n1 slots=2;"

out=$(sbatch_out -N2 --ntasks-per-node=2 --ddp=hostfile --wrap "srun $dir/hf.sh") || fail "sbatch --ddp=hostfile failed: $out"
check_hostfile "hostfile from sbatch --ddp=hostfile, -N2 --ntasks-per-node=2" "$out" 4 "n1 slots=2;n2 slots=2;"

out=$(srun_t -N2 -n2 --ddp "$dir/hf.sh" 2>&1) || fail "srun --ddp failed: $out"
expect_eq "plain --ddp sets no SLURM_DDP_HOSTFILE" "$(grep '^hf ' <<<"$out" | awk '{print $4}' | sort -u)" "path=unset"

echo "test_hostfile: $(($(date +%s) - t0)) s"
finish
