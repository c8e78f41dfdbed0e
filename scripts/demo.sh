#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The main job on a fresh machine (as root): install, build, start a real 2-node Slurm cluster on
# this machine with the plugin registered, and run a PyTorch DDP training step across both nodes
# with nothing but `srun --ddp`. The cluster stays up for you to try more; stop it with
#   bash tests/cluster/cluster.sh down
set -euo pipefail
cd "$(dirname "$0")/.."
bash tests/cluster/install-deps.sh
cmake -S . -B build >/dev/null
cmake --build build -j"$(nproc)"
PLUGIN="$PWD/build/spank_plugin/spank_ddp.so" bash tests/cluster/cluster.sh up
# shellcheck disable=SC1091
source "${SDDP_CLUSTER_DIR:-/tmp/slurm-ddp-cluster}/env.sh"
set -x
srun --ddp=verbose -N2 --ntasks-per-node=2 /usr/bin/python3 examples/pytorch/train_ddp.py --epochs 3
