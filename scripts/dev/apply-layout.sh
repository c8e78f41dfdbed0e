#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Moves the core's files into their folders by concern, as scripts/dev/core-layout.txt maps them,
# on whatever tree it runs in (a branch merged after the mapping was written included):
#
#   1. refuses to start when a file in libbootstrap/src/core/'s root is not in the mapping (a file
#      that another branch added: give it a line, then run again);
#   2. `git mv`s every mapped file still at its old place (a file already moved is skipped, so
#      running twice is harmless);
#   3. rewrites every mention of an old path, e.g. `#include "core/x.hpp"`, `${_src}/core/x.cpp`,
#      `libbootstrap/src/core/x.cpp`, `core/x` in comments and docs, in every tracked text file;
#   4. puts each source into the CMake target of its new layer (libbootstrap/CMakeLists.txt: a
#      file moved from core/ to rendezvous/ leaves sddp_core's list for sddp_rendezvous's);
#   5. formats the C++ files it changed (clang-format, includes re-sorted) and checks that no
#      old path is left.
#
# usage: scripts/dev/apply-layout.sh [--dry-run]   (from anywhere inside the repository)
# Exit status: 0 done (or nothing to do), 1 unmapped files or a conflict, 2 usage.
#
# Replaying the move after other branches merged: merge the commits up to the one that added
# this script (not the applied move), run it, give every file it names a line in the mapping and
# run it again, then build everything, run `ctest -L unit` and tests/layers, and commit the
# result as one commit.
set -euo pipefail

dry_run=0
case "${1:-}" in
  "") ;;
  --dry-run) dry_run=1 ;;
  *) echo "usage: $0 [--dry-run]" >&2; exit 2 ;;
esac

root=$(git rev-parse --show-toplevel)
cd "$root"
mapping=scripts/dev/core-layout.txt
[[ -f $mapping ]] || { echo "apply-layout: $mapping not found in $root" >&2; exit 1; }

cxx_list=$(mktemp)
trap 'rm -f "$cxx_list"' EXIT
SDDP_DRY_RUN=$dry_run SDDP_CXX_LIST=$cxx_list python3 - "$mapping" <<'PY'
import os
import re
import subprocess
import sys
from pathlib import Path

SRC = "libbootstrap/src"
mapping_file = sys.argv[1]
dry = os.environ.get("SDDP_DRY_RUN") == "1"
moves, folds = {}, {}
for n, raw in enumerate(Path(mapping_file).read_text().splitlines(), 1):
    line = raw.split("#", 1)[0].strip()
    if not line:
        continue
    m = re.fullmatch(r"(\S+)\s+(->|=>)\s+(\S+)", line)
    if not m:
        sys.exit(f"apply-layout: {mapping_file}:{n}: expected 'old -> new' or 'old => new', got {raw!r}")
    old, arrow, new = m.groups()
    (moves if arrow == "->" else folds)[old] = new

# 1. Every file in core/'s root must have a place.
core_root = Path(SRC, "core")
unmapped = sorted(f"core/{p.name}" for p in core_root.iterdir()
                  if p.is_file() and f"core/{p.name}" not in moves)
if unmapped:
    print("apply-layout: these files in libbootstrap/src/core/ have no line in "
          f"{mapping_file}; add one each ('core/x.cpp -> core/<folder>/x.cpp') and run again:",
          file=sys.stderr)
    for u in unmapped:
        print(f"  {u}", file=sys.stderr)
    sys.exit(1)

# 2. The moves.
conflicts, todo, gone = [], [], []
for old, new in sorted(moves.items()):
    o, n = Path(SRC, old), Path(SRC, new)
    if o.exists() and n.exists():
        conflicts.append(f"{o} and {n} both exist")
    elif o.exists():
        todo.append((o, n))
    elif not n.exists():
        gone.append(old)
for old, new in sorted(folds.items()):
    if Path(SRC, old).exists():
        conflicts.append(f"{SRC}/{old} still exists, but the mapping folds it into {new}")
if conflicts:
    sys.exit("apply-layout: " + "; ".join(conflicts))
for o, n in todo:
    print(f"git mv {o} {n}")
    if not dry:
        n.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "mv", str(o), str(n)], check=True)
if gone:
    print("apply-layout: not in this tree (skipped): " + ", ".join(gone))

# 3. Mentions of the old paths. The unit of a move is the path without its extension, so
# "core/x.hpp", "core/x.cpp" and "core/x" in prose all follow; a name is whole only when no word character,
# '/' or '-' follows or a word character precedes, so core/options does not touch
# core/options_help, nor (on a second run) core/options/options.
def stem(p):
    return re.sub(r"\.(hpp|cpp|h|c)$", "", p)

stems = {}
for old, new in moves.items():
    so, sn = stem(old), stem(new)
    if stems.get(so, sn) != sn:
        sys.exit(f"apply-layout: {old} maps to two places ({stems[so]} and {sn})")
    stems[so] = sn
stems = {o: n for o, n in stems.items() if o != n}
# A folded header is rewritten by its exact name: its .cpp may live on elsewhere.
stems.update(folds)
pattern = re.compile(r"(?!x)x")  # matches nothing when nothing moves
if stems:
    pattern = re.compile(r"(?<![\w.-])(" + "|".join(re.escape(s) for s in
                         sorted(stems, key=len, reverse=True)) + r")(?![\w/-])")
skip = {mapping_file, "scripts/dev/apply-layout.sh"}
files = subprocess.run(["git", "ls-files", "-z"], check=True, capture_output=True).stdout
changed = []
for f in files.decode().split("\0"):
    if not f or f in skip or not stems or not os.path.isfile(f) or os.path.islink(f):
        continue
    try:
        text = Path(f).read_text()
    except (UnicodeDecodeError, OSError):
        continue
    new = pattern.sub(lambda m: stems[m.group(1)], text)
    if new != text:
        changed.append(f)
        if not dry:
            Path(f).write_text(new)
print(f"apply-layout: rewrote mentions in {len(changed)} files")

# 4. Each source in its layer's target. A ${_src}/<layer>/... source in another layer's
# add_library() moves to its own layer's; the lists touched are rewritten one source a line,
# sorted, so that sources other branches added are kept and later merges conflict less.
cml = Path("libbootstrap/CMakeLists.txt")
before = cml.read_text()
LAYERS = ("core", "os", "topology", "rendezvous", "nccl")
block = re.compile(r"add_library\(sddp_(\w+) STATIC\b(.*?)\)", re.S)
token = re.compile(r"\$\{_src\}/(\w+)/\S+\.(?:cpp|c)\b")
lists = {}
for m in block.finditer(before):
    if m.group(1) in LAYERS:
        lists[m.group(1)] = [t.group(0) for t in token.finditer(m.group(2))]
touched = {"core"} if stems else set()
for layer, toks in list(lists.items()):
    for t in list(toks):
        owner = token.match(t).group(1)
        if owner != layer:
            if owner not in lists:
                sys.exit(f"apply-layout: no add_library(sddp_{owner} STATIC ...) in {cml} for {t}")
            lists[layer].remove(t)
            lists[owner].append(t)
            touched |= {layer, owner}
            print(f"apply-layout: {cml}: {t} -> sddp_{owner}")
def relist(m):
    layer = m.group(1)
    if layer not in touched:
        return m.group(0)
    rest = token.sub("", m.group(2)).strip()
    if rest:
        sys.exit(f"apply-layout: {cml}: sddp_{layer}'s add_library() holds more than sources "
                 f"({rest!r}); move the sources by hand")
    body = "".join(f"\n  {t}" for t in sorted(set(lists[layer])))
    return f"add_library(sddp_{layer} STATIC{body})"
after = block.sub(relist, before)
if after != before and not dry:
    cml.write_text(after)

# 5. Nothing old left.
if not dry:
    left = []
    for f in changed + [str(cml)]:
        for n, line in enumerate(Path(f).read_text().splitlines(), 1):
            if pattern.search(line):
                left.append(f"{f}:{n}: {line.strip()}")
    if left:
        sys.exit("apply-layout: old paths still mentioned:\n  " + "\n  ".join(left))
    cxx = [f for f in changed if f.endswith((".cpp", ".hpp", ".h", ".c"))]
    Path(os.environ["SDDP_CXX_LIST"]).write_text("\n".join(cxx) + ("\n" if cxx else ""))
PY

if [[ $dry_run == 0 ]]; then
  # The renamed includes sort differently; the repo's .clang-format decides the order.
  if command -v clang-format >/dev/null; then
    xargs -r clang-format -i < "$cxx_list"
  else
    echo "apply-layout: clang-format not found: run it on the changed C++ files" >&2
  fi
  echo "apply-layout: done; now build everything and run the unit tests and tests/layers"
fi
