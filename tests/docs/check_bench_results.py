#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The performance figures stay traceable: docs/performance.md, the README and bench/README.md
name only raw files and scripts that exist, every raw file under bench/results/ starts with the
header of bench/lib/raw_header.sh (commit, date, machine, command), and every C/C++ source under
bench/ is built by a CMakeLists.txt there.
Usage: check_bench_results.py SOURCE_DIR
"""
import glob
import os
import re
import sys

src = sys.argv[1]
failures = []
HEADER = ("# commit: ", "# date: ", "# machine: ", "# command: ")


def check(ok, what):
    print(("ok: " if ok else "FAIL: ") + what)
    if not ok:
        failures.append(what)


def read(rel):
    with open(os.path.join(src, rel), encoding="utf-8") as f:
        return f.read()


# 1. Every raw file opens with the four header lines, in order.
raw = sorted(glob.glob(os.path.join(src, "bench", "results", "*.txt")))
check(bool(raw), "bench/results/ holds raw files")
for path in raw:
    with open(path, encoding="utf-8", errors="replace") as f:
        first = [f.readline() for _ in HEADER]
    name = os.path.relpath(path, src)
    check(all(line.startswith(h) for line, h in zip(first, HEADER)),
          f"{name} starts with commit, date, machine and command")

# 2. Every bench/ path the documents name exists (links relative to the document included).
for doc in ("docs/performance.md", "README.md", "bench/README.md"):
    text = read(doc)
    base = os.path.dirname(doc)
    named = set(re.findall(r"\]\(((?:\.\./)?(?:bench/)?results/[^)#\s]+|(?:\.\./)?bench/[^)#\s]+)\)", text))
    for link in sorted(named):
        target = os.path.normpath(os.path.join(src, base, link))
        check(os.path.exists(target), f"{doc} links {link}, which exists")
    for path in sorted(set(re.findall(r"(?<![\w/.-])(bench/[\w./-]*\.(?:sh|py|cpp|c|txt))(?![\w.])", text))):
        check(os.path.exists(os.path.join(src, path)), f"{doc} names {path}, which exists")
    check("docs/bench/" not in text, f"{doc} names no docs/bench/ file (moved to bench/results/)")

# 3. Every C/C++ source under bench/ is in a CMakeLists.txt of its folder or one above it.
cmake = {os.path.dirname(p): open(p, encoding="utf-8").read()
         for p in glob.glob(os.path.join(src, "bench", "**", "CMakeLists.txt"), recursive=True)}
for source in sorted(glob.glob(os.path.join(src, "bench", "**", "*.c*"), recursive=True)):
    if not source.endswith((".c", ".cpp", ".cc")):
        continue
    d, built = os.path.dirname(source), False
    while d.startswith(os.path.join(src, "bench")):
        rel = os.path.relpath(source, d)
        if d in cmake and re.search(r"(?<![\w/.-])" + re.escape(rel) + r"(?![\w.])", cmake[d]):
            built = True
            break
        d = os.path.dirname(d)
    check(built, f"{os.path.relpath(source, src)} is built by a bench CMakeLists.txt")

print("bench results in sync" if not failures else f"{len(failures)} problem(s)")
sys.exit(1 if failures else 0)
