#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs everything slurm-ddp needs on Debian 12 (bookworm): the build toolchain, the test and
# analysis tools, Slurm 22.05 with munge, and the CPU build of PyTorch for the gloo tests.
#
# Idempotent and fast when nothing is missing: it asks dpkg first and only runs apt-get (and
# `apt-get update`, only when the package lists cannot supply what is missing) for the
# packages that are not installed yet.
#
# Usage (as root):  bash tests/cluster/install-deps.sh
# Knobs:            SDDP_SKIP_TORCH=1   skip python3-torch (about 640 MB)
set -euo pipefail

if [[ $(id -u) -ne 0 ]]; then
  echo "install-deps.sh: must run as root (it calls apt-get)" >&2
  exit 1
fi

packages=(
  # Build and static analysis.
  cmake g++ make pkg-config clang libclang-rt-14-dev llvm libgtest-dev googletest
  libbenchmark-dev clang-format clang-tidy cppcheck valgrind
  # Slurm (headers for the SPANK plugin, daemons for the local test cluster) and PMI.
  slurmctld slurmd slurm-client munge libslurm-dev libpmi2-0-dev libpmix-dev
  # Topology, and what tests/cluster/cluster.sh needs (ip, nsenter/unshare, pgrep).
  libhwloc-dev hwloc iproute2 procps util-linux
  # Open MPI, for the MPI_Bcast comparison of the benchmarks (bench/run.sh; about 7 MB).
  libopenmpi-dev openmpi-bin
  # HMAC-SHA256 and the constant-time compare of the rendezvous handshake: Nettle (the default),
  # OpenSSL's libcrypto (the FIPS-capable build, -DSDDP_CRYPTO=openssl, tested beside it) and
  # libsodium (a candidate of bench/process_cost only).
  nettle-dev libssl-dev libsodium-dev
  # Building current Slurm from source for the slurm-current phase (tests/cluster/build-slurm.sh).
  libmunge-dev libjson-c-dev liblz4-dev
  # rpmbuild, to build and check the RPM (packaging/rpm/slurm-ddp.spec) on Debian.
  rpm
  # Native stacks of a hung step's ranks (slurm-ddp stacks): eu-stack, else gdb; python3-dbg
  # gives gdb the py-bt of /usr/bin/python3 (the Python frames of a rank without py-spy).
  elfutils gdb python3-dbg
  # Container runtimes for the container tests (tests/containers/): what enroot needs built on
  # glibc (scripts/container-kit.sh builds it and pyxis from ../shared/containers), the image
  # builder (scripts/container-image.sh), Charliecloud's ch-run (charliecloud-runtime: the
  # `charliecloud` package would add Docker and Buildah) and Podman with runc (crun, its default,
  # refuses the hybrid cgroup layout of the test machines). About 24 MB.
  makeself libbsd-dev libcap-dev squashfs-tools jq parallel pigz zstd fuse-overlayfs squashfuse
  libcap2-bin mmdebstrap charliecloud-runtime podman runc
)
if [[ ${SDDP_SKIP_TORCH:-0} != 1 ]]; then
  # CPU-only PyTorch 1.13 for /usr/bin/python3: the gloo all-reduce tests; its C++ headers and
  # pybind11 for building Horovod's torch adapter (scripts/framework-env.sh horovod).
  packages+=(python3-torch libtorch-dev pybind11-dev)
fi

# dpkg-query prints "ii " for an installed package and nothing for one it has never heard
# of; everything not "ii" is missing. One call for all packages keeps the no-op path fast.
declare -A installed=()
while read -r name status; do
  [[ $status == ii ]] && installed[${name%%:*}]=1
done < <(dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' "${packages[@]}" 2>/dev/null || true)
missing=()
for pkg in "${packages[@]}"; do
  [[ -n ${installed[$pkg]:-} ]] || missing+=("$pkg")
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install-deps.sh: all ${#packages[@]} packages already installed"
  exit 0
fi

echo "install-deps.sh: installing ${#missing[@]} package(s): ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# Another apt-get may be running (e.g. a provisioning step): wait for its lock instead of failing.
apt_opts=(-o DPkg::Lock::Timeout=600 -o Acquire::Retries=3)

# `apt-get update` only when some missing package has no install candidate: on a fresh
# container the lists are empty; on a provisioned one they are usually good enough.
need_update=0
for pkg in "${missing[@]}"; do
  candidate=$(apt-cache policy "$pkg" 2>/dev/null | awk '/Candidate:/ {print $2}')
  if [[ -z $candidate || $candidate == "(none)" ]]; then
    need_update=1
    break
  fi
done
if [[ $need_update -eq 1 ]]; then
  echo "install-deps.sh: apt-get update"
  apt-get "${apt_opts[@]}" update
fi

apt-get "${apt_opts[@]}" install -y --no-install-recommends "${missing[@]}"
echo "install-deps.sh: done"
