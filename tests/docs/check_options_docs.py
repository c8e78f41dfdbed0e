#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""docs/usage.md's options table and spank_ddp(8)'s options list exactly the options the code
declares (core/options.cpp, printed by `slurm-ddp options --names`), so the docs cannot drift.

An entry names an option by its first word (`gpu-bind=...` is gpu-bind); an alias may be named in
the same entry as "(or NAME)". The words may differ from the code's help text.
Usage: check_options_docs.py SOURCE_DIR PATH_TO_slurm-ddp
"""
import os
import re
import subprocess
import sys

src, cli = sys.argv[1], sys.argv[2]
names = set(subprocess.run([cli, "options", "--names"], capture_output=True, text=True,
                           check=True).stdout.split())
failures = []


def entry_names(text):
    """The option named at the start of an entry, and any "(or NAME)" alias in it."""
    out = set()
    m = re.match(r"([a-z][a-z-]*)", text)
    if m:
        out.add(m.group(1))
    out.update(re.findall(r"\(or `?([a-z][a-z-]*)`?\)", text))
    return out


def compare(where, documented):
    missing, extra = sorted(names - documented), sorted(documented - names)
    print(f"{where}: {len(documented)} options documented, {len(names)} in the code")
    if missing:
        failures.append(f"{where} lacks {', '.join(missing)}")
    if extra:
        failures.append(f"{where} documents options the code does not have: {', '.join(extra)}")


usage = open(os.path.join(src, "docs", "usage.md"), encoding="utf-8").read()
section = usage.split("## Options", 1)[1].split("\n## ", 1)[0]
documented = set()
for row in re.findall(r"^\| (`.*?) \|", section, re.M):
    for cell in re.split(r",\s*", row.split(" | ")[0]):
        documented |= entry_names(cell.replace("`", ""))
    documented |= entry_names(row.replace("`", ""))
compare("docs/usage.md options table", documented)

man = open(os.path.join(src, "docs", "spank_ddp.8"), encoding="utf-8").read()
man_opts = man.split(".SH OPTIONS", 1)[1].split(".SH ENVIRONMENT", 1)[0]
documented = set()
for header in re.findall(r"^\.TP\n\.BR? (.*)$", man_opts, re.M):
    plain = re.sub(r"\\f[BIRP]", "", header).replace("\\-", "-").replace('"', "")
    documented |= entry_names(plain)
compare("spank_ddp(8) OPTIONS and PLUGIN ARGUMENTS", documented)

for f in failures:
    print("FAIL: " + f)
print(f"{len(failures)} failed" if failures else "options docs in sync with the code")
sys.exit(1 if failures else 0)
