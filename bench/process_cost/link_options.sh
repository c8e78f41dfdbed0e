#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# What each link option of libslurm_ddp.so saves a rank: relinks the library from the build's
# objects once per variant (the C++ runtime and Nettle shared or inside, then one option at a
# time on top of the shipped link; "lazy binding" drops -z now),
# then runs the C API client (capi_client) once under callgrind against each, through
# process_cost. Prints, per variant: the instructions from exec to the id (total, in ld.so, in
# the library), the objects loaded and the library's relocations that need a symbol look-up. Then
# the same choice for the plugin (its dlopen) and the CLI (slurm-ddp --version).
#
#   bash bench/process_cost/link_options.sh [BUILD_DIR] > bench/results/process-cost-link-options-<date>.txt
#
# BUILD_DIR (default build) is a Ninja build with -DSDDP_BUILD_BENCH=ON and the Nettle crypto,
# target process_cost_all built; the link command is taken from it (ninja -t commands).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=$(cd "${1:-build}" && pwd)
lib=libbootstrap/src/api/libslurm_ddp.so.0.1.0
driver=$build/bench/process_cost/process_cost
client=$build/bench/process_cost/capi_client
for f in "$build/build.ninja" "$driver" "$client"; do
    if [[ ! -e $f ]]; then
        echo "link_options.sh: $f is missing: give a Ninja build dir with -DSDDP_BUILD_BENCH=ON" \
            "and the target process_cost_all built" >&2
        exit 2
    fi
done
command -v valgrind >/dev/null || { echo "link_options.sh: valgrind is missing" >&2; exit 2; }
link=$(ninja -C "$build" -t commands "$lib" | tail -n 1)
link=${link#: && }
link=${link% && :}
nettle_a=$(grep -o '[^ ]*/libnettle\.a' <<<"$link" | head -n 1 || true)
nettle_so=$(pkg-config --variable=libdir nettle 2>/dev/null || true)/libnettle.so
if [[ -z $nettle_a || ! -e $nettle_so ]]; then
    echo "link_options.sh: the build must link libnettle.a (SDDP_SELF_CONTAINED=ON," \
        "SDDP_CRYPTO=nettle) and pkg-config must find libnettle.so" >&2
    exit 2
fi
# The shipped options, taken out to start from the library as it was linked before them.
base=${link//-static-libstdc++ -static-libgcc/}
base=${base//-Wl,--gc-sections/}
shared_nettle="-Wl,--push-state,--no-as-needed $nettle_so -Wl,--pop-state"

variants=(
    "shared C++ runtime, libnettle.so|$shared_nettle"
    "shared C++ runtime, libnettle.a|"
    "static C++ runtime, libnettle.so|-static-libstdc++ -static-libgcc $shared_nettle"
    "static C++ runtime, libnettle.a|-static-libstdc++ -static-libgcc"
    "+gc-sections (shipped)|-static-libstdc++ -static-libgcc -Wl,--gc-sections"
    "+pack-relative-relocs|-static-libstdc++ -static-libgcc -Wl,--gc-sections -Wl,-z,pack-relative-relocs"
    "+Bsymbolic|-static-libstdc++ -static-libgcc -Wl,--gc-sections -Wl,-Bsymbolic"
    "+lazy binding (no -z now)|-static-libstdc++ -static-libgcc -Wl,--gc-sections -Wl,-z,lazy"
)

tmp=$(mktemp -d /tmp/link-options.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=bench/lib/raw_header.sh
source "$here/../lib/raw_header.sh"
raw_header "bash bench/process_cost/link_options.sh $*"
echo "# bench/process_cost/link_options.sh: libslurm_ddp.so's link options against a rank's instructions, exec to the id"
echo "# linker: $(ld --version | head -n 1); $(ldd --version | head -n 1)"
echo
echo "| variant | Ir total | Ir in ld.so | Ir in libslurm_ddp.so | objects loaded | symbol relocations of the library | its size (stripped) |"
echo "|---|---|---|---|---|---|---|"
for v in "${variants[@]}"; do
    name=${v%%|*}
    extra=${v#*|}
    dir=$tmp/$(tr -c 'a-z0-9\n' _ <<<"$name")
    mkdir -p "$dir"
    # Ahead of the objects: a libnettle.so placed there satisfies the HMAC before libnettle.a is
    # searched.
    cmd=${base/-o $lib/$extra -o $dir/libslurm_ddp.so.0}
    (cd "$build" && eval "$cmd") >"$dir/link.log" 2>&1 || {
        echo "| $name | link failed: $(tail -n 1 "$dir/link.log") | | | | | |"
        continue
    }
    LD_LIBRARY_PATH=$dir timeout 300 "$driver" --reps 1 --wrap \
        "valgrind --tool=callgrind --compress-strings=no --compress-pos=no --callgrind-out-file=$dir/%n.out" \
        "capi=capi:$client" >"$dir/run.log" 2>&1 || true
    if [[ ! -s $dir/capi.out ]]; then
        echo "| $name | run failed: $(grep -v '^==' "$dir/run.log" | tail -n 1) | | | | | |"
        continue
    fi
    read -r total ld own < <(python3 - "$dir/capi.out" <<'PY'
import sys
obj, skip, total, ld, own = "?", False, 0, 0, 0
for line in open(sys.argv[1]):
    if skip:
        skip = False
        continue
    if line.startswith("ob="):
        obj = line[3:].strip()
    elif line.startswith("calls="):
        skip = True
    elif line.startswith("totals:"):
        total = int(line.split()[1])
    elif line[:1].isdigit() or line[:1] in "+-*":
        parts = line.split()
        if len(parts) >= 2:
            ld += int(parts[1]) if "ld-linux" in obj else 0
            own += int(parts[1]) if "libslurm_ddp" in obj else 0
print(f"{total:,} {ld:,} {own:,}")
PY
    )
    objects=$(LD_LIBRARY_PATH=$dir ldd "$client" | awk '$1 !~ /vdso/ { sub(".*/", "", $1); print $1 }' | sort | tr '\n' ' ')
    symrel=$(readelf -rW "$dir/libslurm_ddp.so.0" | grep -cE 'R_X86_64_(GLOB_DAT|JUMP_SLOT|64) ' || true)
    strip -o "$dir/stripped.so" "$dir/libslurm_ddp.so.0"
    size=$(python3 -c 'import os, sys; print(f"{os.path.getsize(sys.argv[1]):,}")' "$dir/stripped.so")
    echo "| $name | $total | $ld | $own | $objects| $symrel | $size |"
done
echo
echo "# objects loaded: besides capi_client itself and the vDSO; symbol relocations: GLOB_DAT, JUMP_SLOT and 64-bit ones, each a look-up at load under -z now"

# The plugin (dlopen()ed by srun and every slurmstepd, --ddp or not) and the CLI (run in every
# task under --ddp=check): the C++ runtime shared, as before, or inside, as shipped.
instructions() {  # command... -> total Ir of running it under callgrind
    valgrind --tool=callgrind --callgrind-out-file="$tmp/one.out" "$@" >/dev/null 2>&1 || true
    awk '/^totals:/ { print $2 }' "$tmp/one.out" | python3 -c 'print(f"{int(input()):,}")'
}
relink() {  # ninja output, file to write, "shared" or "inside"
    local cmd
    cmd=$(ninja -C "$build" -t commands "$1" | tail -n 1)
    cmd=${cmd#: && }
    cmd=${cmd% && :}
    cmd=${cmd//-static-libstdc++ -static-libgcc/}
    if [[ $3 == inside ]]; then
        cmd=${cmd/-o $1/-static-libstdc++ -static-libgcc -o $2}
    else
        cmd=${cmd/-o $1/-o $2}
    fi
    (cd "$build" && eval "$cmd") >"$tmp/relink.log" 2>&1
}
dl=$build/bench/process_cost/dlopen_client
echo
echo "| program | C++ runtime shared | inside | the program alone |"
echo "|---|---|---|---|"
if [[ -x $dl ]] && relink spank_plugin/spank_ddp.so "$tmp/plugin-shared.so" shared &&
    relink spank_plugin/spank_ddp.so "$tmp/plugin-inside.so" inside; then
    echo "| dlopen of spank_ddp.so (srun, slurmstepd) | $(instructions "$dl" "$tmp/plugin-shared.so") |" \
        "$(instructions "$dl" "$tmp/plugin-inside.so") | $(instructions "$dl") |"
fi
if relink tools/slurm-ddp "$tmp/cli-shared" shared && relink tools/slurm-ddp "$tmp/cli-inside" inside; then
    echo "| slurm-ddp --version | $(instructions "$tmp/cli-shared" --version) |" \
        "$(instructions "$tmp/cli-inside" --version) | - |"
fi
