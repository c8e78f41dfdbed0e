#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The Debian packages an admin installs: cpack builds them (plugin + tool, runtime library,
# development files, debug symbols), their names, versions, dependencies and file lists are what
# admins expect, dpkg installs them, the snippet enabled by a symlink makes the installed plugin
# work on the real cluster (srun --help lists --ddp, a srun --ddp step runs), the CLI and the
# library are in place and stripped, and dpkg -r removes everything again.
source "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || skip "installing a package needs root"
command -v dpkg >/dev/null && command -v cpack >/dev/null || skip "dpkg or cpack missing"
pkgs="slurm-ddp libslurm-ddp0 libslurm-ddp-dev"
for p in $pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' && skip "$p is already installed on this machine; not touching it"
done
dir=$(mktemp -d /tmp/sddp-deb.XXXXXX)
link=/etc/slurm/plugstack.conf.d/slurm-ddp.conf
made_link=0
cleanup() {
    [ "$made_link" = 1 ] && rm -f "$link"
    dpkg --purge slurm-ddp-dbgsym libslurm-ddp0-dbgsym $pkgs >/dev/null 2>&1 || true
    rm -rf "$dir"; use_plugin
}
trap cleanup EXIT

(cd "$dir" && cpack -G DEB --config "$SDDP_BUILD_DIR/CPackConfig.cmake" >"$dir/cpack.log" 2>&1) || { fail "cpack failed"; tail -20 "$dir/cpack.log"; finish; }
deb() { ls "$dir"/"$1"_*.deb 2>/dev/null | head -1; }
for p in $pkgs; do [ -n "$(deb "$p")" ] && pass "built $(basename "$(deb "$p")")" || fail "no $p package: $(ls "$dir")"; done
ls "$dir"/slurm-ddp-dbgsym_*.ddeb "$dir"/libslurm-ddp0-dbgsym_*.ddeb >/dev/null 2>&1 \
    && pass "debug symbols in separate -dbgsym packages" || fail "no -dbgsym packages: $(ls "$dir")"

field() { dpkg-deb -f "$(deb "$1")" "$2"; }
files() { dpkg-deb -c "$(deb "$1")" | awk '{print $6}' | sed 's,^\./,/,' | grep -v '/$' | sort; }
ver=$(field slurm-ddp Version)
expect_contains "package version carries the Slurm series" "$ver" "+slurm"
deps=$(field slurm-ddp Depends)
major=${ver##*+slurm}; next=$(awk -v s="$major" 'BEGIN { split(s, a, "."); printf "%d.%02d", a[1], a[2] + 1 }')
expect_contains "slurm-ddp needs Slurm >= its series" "$deps" "slurm-client (>= $major) | slurm-smd-client (>= $major)"
expect_contains "slurm-ddp refuses the next Slurm series" "$deps" "slurm-client (<< $next) | slurm-smd-client (<< $next)"
expect_contains "-dev depends on the exact runtime" "$(field libslurm-ddp-dev Depends)" "libslurm-ddp0 (= $ver)"
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
plug_files=$(files slurm-ddp); lib_files=$(files libslurm-ddp0); dev_files=$(files libslurm-ddp-dev)
for f in /usr/bin/slurm-ddp /usr/share/slurm-ddp/ddp.conf /usr/share/man/man8/spank_ddp.8 \
         /usr/share/man/man1/slurm-ddp.1 /usr/share/doc/slurm-ddp/copyright; do
    grep -qx -- "$f" <<<"$plug_files" && pass "slurm-ddp ships $f" || fail "slurm-ddp lacks $f: $plug_files"
done
grep -q '/spank_ddp.so$' <<<"$plug_files" && pass "slurm-ddp ships the plugin" || fail "slurm-ddp lacks spank_ddp.so"
grep -q 'libslurm_ddp\|/include/' <<<"$plug_files" && fail "slurm-ddp also holds library files" || pass "slurm-ddp holds no library files"
grep -qx "/usr/lib/$multiarch/libslurm_ddp.so.0" <<<"$lib_files" && pass "libslurm-ddp0: SONAME link in the multiarch libdir" || fail "libslurm-ddp0 files: $lib_files"
grep -qx "/usr/share/doc/libslurm-ddp0/copyright" <<<"$lib_files" && pass "libslurm-ddp0 ships the licence" || fail "libslurm-ddp0 has no copyright file"
grep -q '\.h$\|\.pc$\|cmake\|libslurm_ddp\.so$' <<<"$lib_files" && fail "libslurm-ddp0 holds development files: $lib_files" || pass "libslurm-ddp0 holds no development files"
for f in /usr/include/slurm_ddp/bootstrap.h "/usr/lib/$multiarch/libslurm_ddp.so" \
         "/usr/lib/$multiarch/pkgconfig/slurm_ddp.pc" "/usr/lib/$multiarch/cmake/slurm_ddp/slurm_ddpConfig.cmake"; do
    grep -qx -- "$f" <<<"$dev_files" && pass "libslurm-ddp-dev ships $f" || fail "libslurm-ddp-dev lacks $f: $dev_files"
done

dpkg -i "$(deb libslurm-ddp0)" "$(deb libslurm-ddp-dev)" "$(deb slurm-ddp)" >"$dir/dpkg.log" 2>&1 \
    && pass "dpkg -i of the three packages" || { fail "dpkg -i failed"; cat "$dir/dpkg.log"; finish; }
PLUGDIR=$(dirname "$(dpkg -L slurm-ddp | grep '/spank_ddp.so$')")
expect_eq "plugin installed into Slurm's plugin directory" "$PLUGDIR" "$(dirname "$(find /usr/lib -path '*slurm*' -name 'spank_*.so' -o -path '*slurm-wlm/auth_munge.so' | grep auth_munge | head -1)")"
expect_eq "SONAME" "$(objdump -p "/usr/lib/$multiarch/libslurm_ddp.so.0" | awk '/SONAME/ {print $2}')" "libslurm_ddp.so.0"
# Outputs are captured before grep: under pipefail, grep -q leaving early makes the writer die of
# SIGPIPE, and the pipeline's status would then flip the verdict.
dynsyms=$(objdump -T "/usr/lib/$multiarch/libslurm_ddp.so.0")
grep -q ' SLURM_DDP_0 *sddp_init$' <<<"$dynsyms" \
    && pass "exported symbols carry the version node SLURM_DDP_0" || fail "sddp_init is not versioned SLURM_DDP_0"
for f in "$PLUGDIR/spank_ddp.so" /usr/bin/slurm-ddp "/usr/lib/$multiarch/libslurm_ddp.so.0"; do
    sections=$(readelf -S "$(readlink -f "$f")")
    grep -q '\.debug_info' <<<"$sections" && fail "$f is not stripped" || pass "$f is stripped"
done
grep -q "^optional $PLUGDIR/spank_ddp.so" /usr/share/slurm-ddp/ddp.conf \
    && pass "snippet names the installed plugin" || fail "snippet: $(grep -v '^#' /usr/share/slurm-ddp/ddp.conf)"

# Enable it the way the README says (a symlink), with the cluster's plugstack including the
# directory as Debian's does.
if [ -e "$link" ]; then
    fail "$link exists already; not touching it"
else
    mkdir -p /etc/slurm/plugstack.conf.d && ln -s /usr/share/slurm-ddp/ddp.conf "$link" && made_link=1
    printf 'include %s\n' "/etc/slurm/plugstack.conf.d/*.conf" >"$SDDP_CLUSTER_DIR/plugstack.conf"
    expect_contains "installed plugin enabled by the symlink: srun --help lists --ddp" "$(srun --help 2>&1)" "--ddp"
    out=$(srun_t --ddp -N2 -n4 "$PRINTER")
    check_world "$out" 4 2 n1
fi
expect_eq "installed CLI" "$(/usr/bin/slurm-ddp hostnames 'n[1-2]' | tr '\n' ' ')" "n1 n2 "
expect_contains "slurm-ddp --version names the Slurm series" "$(/usr/bin/slurm-ddp --version)" "built for $major."
for m in /usr/share/man/man8/spank_ddp.8.gz /usr/share/man/man1/slurm-ddp.1.gz /usr/share/man/man8/spank_ddp.8 /usr/share/man/man1/slurm-ddp.1; do
    [ -e "$m" ] || continue
    man -l "$m" >/dev/null 2>&1 && pass "man page $m renders" || fail "man page $m does not render"
done

dpkg -r slurm-ddp libslurm-ddp-dev libslurm-ddp0 >/dev/null && [ ! -e "$PLUGDIR/spank_ddp.so" ] \
    && [ ! -e "/usr/lib/$multiarch/libslurm_ddp.so.0" ] && pass "dpkg -r removes them" || fail "dpkg -r left files"
finish
