#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the RPMs of this checkout (packaging/rpm/slurm-ddp.spec) with rpmbuild, also on Debian
# (apt-get install rpm), where the BuildRequires (RHEL package names) cannot be checked.
#
#   packaging/rpm/build-rpm.sh OUTDIR [SLURM_INCLUDE_DIR]
#
# The source tarball is the working tree as git sees it (tracked and untracked-but-not-ignored
# files), so uncommitted changes are packaged too. The RPMs end up in OUTDIR/RPMS/<arch>/.
set -euo pipefail
out=${1:?usage: build-rpm.sh OUTDIR [SLURM_INCLUDE_DIR]}
slurm_include=${2:-/usr/include}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
spec=$root/packaging/rpm/slurm-ddp.spec
command -v rpmbuild >/dev/null || { echo "build-rpm.sh: rpmbuild missing (apt-get install rpm)" >&2; exit 1; }
[[ -f $slurm_include/slurm/spank.h ]] || { echo "build-rpm.sh: no slurm/spank.h under $slurm_include" >&2; exit 1; }
version=$(sed -n 's/^Version:[[:space:]]*//p' "$spec")

rm -rf "$out"
mkdir -p "$out"/{SOURCES,SPECS,BUILD,RPMS,SRPMS}
out=$(cd "$out" && pwd)
(cd "$root" && git ls-files -z --cached --others --exclude-standard |
  xargs -0 -r sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh |
  tar --null -T - --transform "s,^,slurm-ddp-$version/," -czf "$out/SOURCES/slurm-ddp-$version.tar.gz")
cp "$spec" "$out/SPECS/"
# --nodeps: Debian has no slurm-devel/openssl-devel RPMs; the Debian packages provide the same
# headers. Debian's rpm has no find-debuginfo, so no -debuginfo subpackage here (RHEL makes one).
rpmbuild -bb --nodeps \
  --define "_topdir $out" \
  --define "slurm_include $slurm_include" \
  --define "debug_package %{nil}" \
  "$out/SPECS/slurm-ddp.spec"
ls "$out"/RPMS/*/*.rpm
