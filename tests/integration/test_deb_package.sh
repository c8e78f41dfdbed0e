#!/bin/bash
# The Debian package an admin installs: cpack builds it, dpkg installs it, the plugin it ships
# works on the real cluster (srun --help lists --ddp, a srun --ddp step runs, the CLI and the
# library are in place), and dpkg -r removes it again.
source "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || skip "installing a package needs root"
command -v dpkg >/dev/null && command -v cpack >/dev/null || skip "dpkg or cpack missing"
dpkg-query -W -f='${Status}' slurm-ddp 2>/dev/null | grep -q 'ok installed' && skip "slurm-ddp is already installed on this machine; not touching it"
dir=$(mktemp -d /tmp/sddp-deb.XXXXXX)
cleanup() { dpkg --purge slurm-ddp >/dev/null 2>&1 || true; rm -rf "$dir"; use_plugin; }
trap cleanup EXIT

(cd "$dir" && cpack -G DEB --config "$SDDP_BUILD_DIR/CPackConfig.cmake" >/dev/null 2>&1) || { fail "cpack failed"; finish; }
deb=$(ls "$dir"/slurm-ddp_*.deb)
dpkg -i "$deb" >/dev/null && pass "dpkg -i $(basename "$deb")" || { fail "dpkg -i failed"; finish; }
PLUGDIR=$(dirname "$(dpkg -L slurm-ddp | grep '/spank_ddp.so$')")
expect_eq "plugin installed into Slurm's plugin directory" "$PLUGDIR" "$(dirname "$(find /usr/lib -path '*slurm*' -name 'spank_*.so' -o -path '*slurm-wlm/auth_munge.so' | grep auth_munge | head -1)")"
for f in "$PLUGDIR/spank_ddp.so" /usr/bin/slurm-ddp /usr/include/slurm_ddp/bootstrap.h \
         /usr/lib/pkgconfig/slurm_ddp.pc /usr/lib/cmake/slurm_ddp/slurm_ddpConfig.cmake \
         /usr/share/man/man8/spank_ddp.8 /usr/share/doc/slurm_ddp/ddp.conf.example; do
    [ -e "$f" ] && pass "installed $f" || fail "missing $f"
done
grep -q '^#optional .*/spank_ddp.so' /usr/share/doc/slurm_ddp/ddp.conf.example \
    && pass "plugstack snippet ships disabled" || fail "plugstack snippet is not a commented line"

bash "$CLUSTER" plugin "$PLUGDIR/spank_ddp.so" >/dev/null
expect_contains "installed plugin: srun --help lists --ddp" "$(srun --help 2>&1)" "--ddp"
out=$(srun_t --ddp -N2 -n4 "$PRINTER")
check_world "$out" 4 2 n1
expect_eq "installed CLI" "$(/usr/bin/slurm-ddp hostnames 'n[1-2]' | tr '\n' ' ')" "n1 n2 "
man -l /usr/share/man/man8/spank_ddp.8 >/dev/null 2>&1 && pass "man page renders" || fail "man page does not render"

dpkg -r slurm-ddp >/dev/null && [ ! -e "$PLUGDIR/spank_ddp.so" ] && pass "dpkg -r removes it" || fail "dpkg -r left files"
finish
