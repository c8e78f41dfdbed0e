#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copies what the GPU suite's build needs and a bare GPU machine may lack into the ignored
# .devkit/ of this checkout, for the device tool to carry with it (see scripts/gpu-test.sh):
#
#   .devkit/cuda/     the CUDA runtime's headers and libcudart of this machine's toolkit (used
#                     only where the GPU machine has neither a toolkit nor PyTorch's runtime wheel)
#   .devkit/nettle/   Nettle's headers and libnettle (for a machine without nettle-dev)
#   .devkit/gtest/    GoogleTest's headers, static libraries and CMake package (no libgtest-dev)
#   .devkit/gpu/      ../shared/gpu (the Slurm .debs and slurm-on-device.sh), when it is there
#
# About 45 MiB. The build takes each only where the machine has no copy of its own.
set -euo pipefail
cd "$(dirname "$0")/.."
CUDA=${SDDP_CUDA_ROOT:-/usr/local/cuda}
rm -rf .devkit
mkdir -p .devkit/cuda/lib64 .devkit/nettle/include .devkit/nettle/lib
cp -r "$CUDA/include" .devkit/cuda/
# NCCL comes from the machine (its PyTorch wheel) or the --nccl choice, never from here.
rm -f .devkit/cuda/include/nccl*.h
cp -P "$CUDA"/lib64/libcudart.so* .devkit/cuda/lib64/
cp -r /usr/include/nettle .devkit/nettle/include/
lib=$(readlink -f /usr/lib/x86_64-linux-gnu/libnettle.so)
cp "$lib" .devkit/nettle/lib/
ln -sf "$(basename "$lib")" .devkit/nettle/lib/libnettle.so
ln -sf "$(basename "$lib")" .devkit/nettle/lib/libnettle.so.8
ma=x86_64-linux-gnu
mkdir -p .devkit/gtest/include .devkit/gtest/lib/$ma/cmake
cp -r /usr/include/gtest /usr/include/gmock .devkit/gtest/include/
cp /usr/lib/$ma/libgtest*.a /usr/lib/$ma/libgmock*.a .devkit/gtest/lib/$ma/
cp -r /usr/lib/$ma/cmake/GTest .devkit/gtest/lib/$ma/cmake/
[[ -d ../shared/gpu ]] && cp -r ../shared/gpu .devkit/gpu
du -sh .devkit
