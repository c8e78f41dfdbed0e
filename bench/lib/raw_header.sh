#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The first lines of every raw benchmark file: which code, when, on what, by which command, so
# that a figure quoted in the docs can be traced and rerun. Every bench script writes it through
# this one helper (shell scripts source it, Python ones run it):
#   source bench/lib/raw_header.sh; raw_header "bash bench/srun/srun_bench.sh --all" >"$RESULTS"
#   bash bench/lib/raw_header.sh python3 bench/model/scale_model.py ...   # prints the same lines
# The report (bench/report.py) skips lines starting with '#', so the header never disturbs a table.

raw_header() {  # command words... -> prints the header lines
    local root commit dirty model mem
    root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
    commit=$(git -C "$root" rev-parse --short=12 HEAD 2>/dev/null) || commit="unknown (not a git tree)"
    dirty=""
    if [[ $commit != unknown* ]] && [[ -n $(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null) ]]; then
        dirty=" + uncommitted changes"
    fi
    model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)
    mem=$(awk '/^MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo 2>/dev/null)
    echo "# commit: $commit$dirty ($(git -C "$root" log -1 --format=%cs 2>/dev/null))"
    echo "# date: $(date -u '+%F %T') UTC"
    echo "# machine: $(hostname), $(nproc) cores (${model:-unknown CPU}), ${mem:-? GiB}, $(uname -sr), load $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "# command: $*"
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
    raw_header "$@"
fi
