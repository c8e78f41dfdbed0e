#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The RPMs of packaging/rpm/slurm-ddp.spec: rpmbuild builds them from this checkout, and each
# holds exactly the files RHEL admins expect (plugin in /usr/lib64/slurm, the snippet in
# /usr/share/slurm-ddp and nothing enabled under /etc, the licence marked %license), with the
# Slurm series in the release and the dependency bounded to that series.
#   test_rpm.sh WORKDIR SLURM_INCLUDE_DIR
set -uo pipefail
work=${1:?usage: test_rpm.sh WORKDIR SLURM_INCLUDE_DIR} slurm_include=${2:?}
root=$(cd "$(dirname "$0")/../.." && pwd)
failures=0
pass() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
command -v rpmbuild >/dev/null || { echo "SKIP: no rpmbuild (apt-get install rpm)"; exit 77; }

if ! "$root/packaging/rpm/build-rpm.sh" "$work" "$slurm_include" >"$work.log" 2>&1; then
    tail -40 "$work.log"; echo "FAIL: rpmbuild failed (log: $work.log)"; exit 1
fi
hex=$(sed -n 's/^#[ \t]*define[ \t]*SLURM_VERSION_NUMBER[ \t]*0x\([0-9a-fA-F]*\).*/\1/p' "$slurm_include/slurm/slurm_version.h")
series=$(printf '%d.%02d' $((0x${hex%????})) $((0x${hex: -4:2})))
next=$(printf '%d.%02d' $((0x${hex%????})) $((0x${hex: -4:2} + 1)))
main=$(ls "$work"/RPMS/*/slurm-ddp-0.1.0-*.rpm | head -1)
libs=$(ls "$work"/RPMS/*/slurm-ddp-libs-0.1.0-*.rpm | head -1)
devel=$(ls "$work"/RPMS/*/slurm-ddp-devel-0.1.0-*.rpm | head -1)
for r in "$main" "$libs" "$devel"; do [ -f "$r" ] || { echo "FAIL: RPMs missing: $(ls -R "$work/RPMS")"; exit 1; }; done

# Debian's rpm neither compresses man pages nor drops the version from the licence directory as
# RHEL's does: compare without either difference.
normalize() { sed -e 's,^\(/usr/share/licenses/[^/]*\)-0\.1\.0,\1,' -e 's,\(/man/man[0-9]/.*\)\.gz$,\1,'; }
expect_files() {  # expect_files RPM EXPECTED-LINES
    local got; got=$(rpm -qlp "$1" 2>/dev/null | grep -v '/\.build-id' | normalize | sort -u)
    if [ "$got" == "$(sort <<<"$2")" ]; then pass "$(basename "$1"): file list"
    else fail "$(basename "$1"): file list differs (< got, > expected):"; diff <(echo "$got") <(sort <<<"$2"); fi
}
expect_files "$main" "/usr/bin/slurm-ddp
/usr/lib64/slurm/spank_ddp.so
/usr/share/licenses/slurm-ddp/LICENSE
/usr/share/licenses/slurm-ddp
/usr/share/man/man1/slurm-ddp.1
/usr/share/man/man8/spank_ddp.8
/usr/share/slurm-ddp
/usr/share/slurm-ddp/ddp.conf"
expect_files "$libs" "/usr/lib64/libslurm_ddp.so.0
/usr/lib64/libslurm_ddp.so.0.1.0
/usr/share/licenses/slurm-ddp-libs
/usr/share/licenses/slurm-ddp-libs/LICENSE"
expect_files "$devel" "$(cd "$root/libbootstrap/include" && find slurm_ddp -type f | sed 's,^,/usr/include/,')
/usr/include/slurm_ddp
/usr/lib64/cmake/slurm_ddp
/usr/lib64/cmake/slurm_ddp/slurm_ddpConfig.cmake
/usr/lib64/cmake/slurm_ddp/slurm_ddpConfigVersion.cmake
/usr/lib64/cmake/slurm_ddp/slurm_ddpTargets.cmake
/usr/lib64/cmake/slurm_ddp/slurm_ddpTargets-relwithdebinfo.cmake
/usr/lib64/libslurm_ddp.so
/usr/lib64/pkgconfig/slurm_ddp.pc
/usr/share/man/man3/slurm_ddp.3"

# Installing the package enables nothing: no file under /etc that plugstack.conf could include.
[ -z "$(rpm -qcp "$main" 2>/dev/null)" ] && ! rpm -qlp "$main" 2>/dev/null | grep -q '^/etc/' \
    && pass "no configuration under /etc (the plugin is off until the admin links ddp.conf)" \
    || fail "the RPM ships configuration: $(rpm -qcp "$main") $(rpm -qlp "$main" | grep '^/etc/')"
rpm -qLp "$main" 2>/dev/null | normalize | grep -qx /usr/share/licenses/slurm-ddp/LICENSE \
    && pass "LICENSE is %license" || fail "licence files: $(rpm -qLp "$main")"
release=$(rpm -qp --qf '%{RELEASE}' "$main")
[[ $release == 1.slurm$series* ]] && pass "release $release names Slurm $series" || fail "release $release lacks slurm$series"
reqs=$(rpm -qp --requires "$main")
grep -qx "slurm >= $series" <<<"$reqs" && pass "Requires: slurm >= $series" || fail "no 'slurm >= $series' in: $reqs"
grep -qx "slurm < $next" <<<"$reqs" && pass "Requires: slurm < $next" || fail "no 'slurm < $next' in: $reqs"
grep -q "^optional /usr/lib64/slurm/spank_ddp.so " <(rpm2archive - <"$main" | tar -xzO ./usr/share/slurm-ddp/ddp.conf) \
    && pass "snippet names /usr/lib64/slurm/spank_ddp.so" || fail "snippet does not name /usr/lib64/slurm/spank_ddp.so"

if [ "$failures" -ne 0 ]; then echo "$failures check(s) failed"; exit 1; fi
echo "all checks passed"
