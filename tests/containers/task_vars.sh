#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# One line per task, for the container tests' checks: vars SLURM_PROCID HOST NAME=VALUE... for
# each NAME given ("unset" where it is not set).
line="vars ${SLURM_PROCID:-unset} $(hostname)"
for n in "$@"; do line+=" $n=${!n-unset}"; done
echo "$line"
