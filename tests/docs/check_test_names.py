#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The tests the docs name exist: every "unit `Suite.Name`" (or "unit `Suite`") and every
"ctest `name`" (or integration/multiproc/fuzz `name`) in docs/*.md and the README is a test ctest knows in this build, so a renamed or
deleted test cannot stay cited as evidence.
Usage: check_test_names.py SOURCE_DIR BUILD_DIR
"""
import os
import re
import subprocess
import sys

src, build = sys.argv[1], sys.argv[2]
listing = subprocess.run(["ctest", "--test-dir", build, "-N"], capture_output=True, text=True,
                         check=True).stdout
names = set(re.findall(r"Test +#\d+: (\S+)", listing))
# Parameterised GoogleTest names carry an instance prefix and suffix: All/Suite.Name/3.
plain = {re.sub(r"^[^/]*/", "", n).split("/")[0] for n in names}
pages = [os.path.join(src, "README.md")] + sorted(
    os.path.join(src, "docs", f) for f in os.listdir(os.path.join(src, "docs")) if f.endswith(".md"))
failures, cited = [], 0
for page in pages:
    text = open(page, encoding="utf-8").read()
    for kind, name in re.findall(r"\b(unit|ctest|integration|multiproc|fuzz) `([A-Za-z][\w.]*)`", text):
        cited += 1
        if kind == "unit":
            ok = any(n == name or n.startswith(name + ".") for n in plain)
        else:
            ok = name in names or any(n.endswith("." + name) for n in names)
        if not ok:
            failures.append(f"{os.path.relpath(page, src)}: {kind} `{name}` is not a test of this build")
for f in failures:
    print("FAIL: " + f)
print(f"{cited} test names cited, {len(failures)} unknown")
sys.exit(1 if failures else 0)
