#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Checks shared by the Lightning tests, on lightning_ddp.py's STACK lines.

# expect_all FIELD VALUE WHAT OUTPUT: every STACK line has FIELD=VALUE.
expect_all() {
    local lines bad
    lines=$(grep '^STACK ' <<<"$4" || true)
    bad=$(grep -v " $1=$2\( \|\$\)" <<<"$lines" || true)
    if [ -n "$lines" ] && [ -z "$bad" ]; then pass "$3"; else fail "$3 ($1=$2 expected):"; echo "${bad:-no STACK line}"; fi
}

# expect_plugin_port WHAT OUTPUT: Lightning's main_address/main_port are the step's MASTER_ADDR
# and first port, not SLURMEnvironment's own 15000 + last four digits of the job id.
expect_plugin_port() {
    local bad
    bad=$(grep '^STACK ' <<<"$2" | awk '{ for (i = 3; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
            split(f["ports"], pr, "-"); derived = 15000 + f["job"] % 10000
            if (f["main_addr"] != f["env_addr"] || f["main_port"] != pr[1]) print "rank " f["rank"] ": main " f["main_addr"] ":" f["main_port"] ", step " f["env_addr"] ":" pr[1]
            if (f["port"] == derived) print "rank " f["rank"] ": port " f["port"] " is Lightning'"'"'s own 15000 + job id" }')
    expect_eq "$1" "$bad" ""
}
