#!/bin/bash
# Bad --ddp values are refused by srun and sbatch before anything runs, with a useful message.
source "$(dirname "$0")/lib.sh"

refused() {  # refused WHAT NEEDLE CMD...
    local what=$1 needle=$2 out rc=0
    shift 2
    out=$(timeout "$SRUN_TIMEOUT" "$@" 2>&1) || rc=$?
    if [ $rc -eq 0 ]; then fail "$what: accepted ($*)"; return; fi
    expect_contains "$what: refused naming '$needle'" "$out" "$needle"
    expect_not_contains "$what: program did not run" "$out" "RAN-THE-PROGRAM"
}

refused "unknown key" "prot" srun --ddp=prot=29500 -n1 echo RAN-THE-PROGRAM
refused "unknown key lists valid keys" "gpu-bind" srun --ddp=prot=29500 -n1 echo RAN-THE-PROGRAM
refused "bad port" "port=99999999" srun --ddp=port=99999999 -n1 echo RAN-THE-PROGRAM
refused "conflicting pair" "off" srun --ddp=off,verbose -n1 echo RAN-THE-PROGRAM
refused "bad policy" "fastest" srun --ddp=gpu-bind=fastest -n1 echo RAN-THE-PROGRAM
refused "sbatch refuses" "prot" sbatch --ddp=prot=1 --wrap "echo RAN-THE-PROGRAM"

help=$(srun --help 2>&1)
expect_contains "srun --help lists --ddp" "$help" "--ddp"
finish
