#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The performance figures stay traceable: docs/performance.md, docs/performance-history.md, the
README, bench/README.md and the results index bench/results/README.md name only raw files and
scripts that exist, every raw file under bench/results/ starts with the header of
bench/lib/raw_header.sh (commit, date, machine, command) and has its row in the index (so a figure
moved out of the docs stays reachable from its raw file), every link into a section of these pages
names a heading they have, and every C/C++ source under bench/ is built by a CMakeLists.txt there.
Usage: check_bench_results.py SOURCE_DIR
"""
import glob
import os
import re
import sys

src = sys.argv[1]
failures = []
HEADER = ("# commit: ", "# date: ", "# machine: ", "# command: ")
INDEX = "bench/results/README.md"
PAGES = ("docs/performance.md", "docs/performance-history.md", "README.md", "bench/README.md",
         INDEX)


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
for doc in PAGES:
    text = read(doc)
    base = os.path.dirname(doc)
    named = set(re.findall(r"\]\(((?:\.\./)?(?:bench/)?results/[^)#\s]+|(?:\.\./)?bench/[^)#\s]+)\)", text))
    for link in sorted(named):
        target = os.path.normpath(os.path.join(src, base, link))
        check(os.path.exists(target), f"{doc} links {link}, which exists")
    for path in sorted(set(re.findall(r"(?<![\w/.-])(bench/[\w./-]*\.(?:sh|py|cpp|c|txt))(?![\w.])", text))):
        check(os.path.exists(os.path.join(src, path)), f"{doc} names {path}, which exists")
    check("docs/bench/" not in text, f"{doc} names no docs/bench/ file (moved to bench/results/)")

# 3. Every raw file has its row in the index, and every file the index links exists.
index = read(INDEX)
listed = set(re.findall(r"\]\(([^)#\s/]+\.txt)\)", index))
for path in raw:
    check(os.path.basename(path) in listed, f"{INDEX} lists {os.path.basename(path)}")
for name in sorted(listed):
    check(os.path.exists(os.path.join(src, "bench", "results", name)),
          f"{INDEX} links {name}, which exists")


def headings(rel):
    """The anchors GitHub gives the headings of a Markdown file (code blocks skipped)."""
    found, seen, in_code = set(), {}, False
    for line in read(rel).splitlines():
        if line.startswith("```"):
            in_code = not in_code
        m = None if in_code else re.match(r"#{1,6} +(.*)", line)
        if m:
            slug = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-")
            n = seen.get(slug, 0)
            seen[slug] = n + 1
            found.add(slug if n == 0 else f"{slug}-{n}")
    return found


# 4. A link into a section of one of these pages, from the README, docs/ or bench/, names a
# heading the page has: moving a section must not leave a link behind.
pages = glob.glob(os.path.join(src, "docs", "*.md")) + glob.glob(
    os.path.join(src, "bench", "**", "*.md"), recursive=True)
for doc in ["README.md"] + sorted(os.path.relpath(p, src) for p in pages):
    for target, anchor in re.findall(r"\]\(([^)#\s:]*)#([^)\s]+)\)", read(doc)):
        page = doc
        if target:
            page = os.path.relpath(os.path.join(src, os.path.dirname(doc), target), src)
        if page in PAGES and os.path.exists(os.path.join(src, page)):
            check(anchor in headings(page), f"{doc} links {page}#{anchor}, a heading there")

# 5. Every C/C++ source under bench/ is in a CMakeLists.txt of its folder or one above it.
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
