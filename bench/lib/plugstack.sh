#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The overhead benchmarks switch the running cluster's plugin between arms:
#   PLUGSTACK=$SDDP_CLUSTER_DIR/plugstack.conf; source bench/lib/plugstack.sh
#   set_plugstack "required /path/spank_ddp.so"     # or a comment line: no plugin
# Atomic, as tests/cluster/cluster.sh writes it: srun and slurmstepd reread plugstack.conf per
# step and may read it at any moment.
set_plugstack() {  # content -> PLUGSTACK
    local tmp
    tmp=$(mktemp "$PLUGSTACK.XXXXXX")
    printf '%s\n' "$1" >"$tmp"
    chmod 0644 "$tmp"
    mv -f "$tmp" "$PLUGSTACK"
}
