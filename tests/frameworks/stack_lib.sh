#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Shared by the real-stack tests (tests/frameworks/test_*.sh): the cached framework environments
# and the checks every stack gets, on the lines trainers print through stack_report.py.
source "$(dirname "${BASH_SOURCE[0]}")/../integration/lib.sh"
FW_DIR="$SDDP_SOURCE_DIR/tests/frameworks"
export PYTHONPATH="$FW_DIR${PYTHONPATH:+:$PYTHONPATH}"
# Nothing is downloaded at run time: tiny models are built in code.
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
export PIP_NO_INPUT=1 PYTHONDONTWRITEBYTECODE=1
# A crashing interpreter must not leave a few hundred MB of core file in the working directory.
ulimit -c 0

# stack_env NAME: the venv (built on first use, reused after; scripts/framework-env.sh). A failed
# build fails the test: a stack that cannot be installed is not "supported".
stack_env() {
    local d
    # Called as VENV=$(stack_env NAME): the FAIL line goes to stderr, which the caller does not capture.
    d=$(bash "$SDDP_SOURCE_DIR/scripts/framework-env.sh" "$1") ||
        { fail "framework environment '$1' could not be built (scripts/framework-env.sh $1)" >&2; exit 1; }
    echo "$d"
}

# A scratch directory every node can read (the tasks run as root on the same filesystem).
stack_tmp() { local d; d=$(mktemp -d "$SDDP_WORK_ROOT/sddp-stack.XXXXXX"); chmod 755 "$d"; echo "$d"; }

# stack_field FIELD LINE
stack_field() { tr ' ' '\n' <<<"$2" | sed -n "s/^$1=//p"; }

# check_stack WHAT OUTPUT WORLD [MASTER_HOST]: the STACK lines of OUTPUT are one per rank 0..WORLD-1,
# all with world=WORLD, one weights digest, and a rendezvous at MASTER_HOST (default n1) on the
# first port of the step's block (SLURM_DDP_PORTS) that the plugin exported.
check_stack() {
    local what=$1 out=$2 world=$3 master=${4:-n1} lines problems
    lines=$(grep '^STACK ' <<<"$out" || true)
    if [ -z "$lines" ]; then fail "$what: no STACK line in the output:"; tail -40 <<<"$out"; return; fi
    problems=$(awk -v W="$world" -v M="$master" '
        { for (i = 3; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = substr($i, length(kv[1]) + 2) }
          n++; seen[f["rank"]]++; digests[f["weights"]]++
          if (f["world"] != W) printf "rank %s: world=%s, expected %s\n", f["rank"], f["world"], W
          if (f["addr"] != M && f["addr"] != f["env_addr"]) printf "rank %s: rendezvous at %s, MASTER_ADDR=%s\n", f["rank"], f["addr"], f["env_addr"]
          if (f["env_addr"] != M) printf "rank %s: MASTER_ADDR=%s, expected %s\n", f["rank"], f["env_addr"], M
          split(f["ports"], pr, "-")
          if (f["ports"] == "-" || f["ports"] == "") printf "rank %s: no SLURM_DDP_PORTS: not a --ddp step\n", f["rank"]
          else if (f["port"] != pr[1]) printf "rank %s: rendezvous port %s is not the step'"'"'s MASTER_PORT %s (SLURM_DDP_PORTS=%s)\n", f["rank"], f["port"], pr[1], f["ports"]
          if (f["env_port"] != pr[1]) printf "rank %s: MASTER_PORT=%s but the block starts at %s\n", f["rank"], f["env_port"], pr[1] }
        END {
          if (n != W) printf "%d STACK lines, expected %d\n", n, W
          for (r = 0; r < W; r++) if (seen[r] != 1) printf "rank %d reported %d times\n", r, seen[r] + 0
          k = 0; for (d in digests) k++
          if (k != 1) printf "%d different weight digests across ranks\n", k
        }' <<<"$lines")
    if [ -z "$problems" ]; then pass "$what: $world ranks, identical result, rendezvous on the step's MASTER_ADDR:MASTER_PORT"
    else fail "$what:"; echo "$problems"; echo "$lines"; fi
}
