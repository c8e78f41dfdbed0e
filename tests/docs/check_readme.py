#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The README and the user documentation stay in sync with the tree.

Checks: the README's first screen names the two commands and they exist; every repository path
the README and docs/*.md mention exists; every `--ddp=...` value and plugin-argument line in
them is accepted by the real parser (`slurm-ddp check-options`); every `slurm-ddp` command shown
that needs no Slurm runs and succeeds; every option key in docs/usage.md's options table is a key
the parser knows.
Usage: check_readme.py SOURCE_DIR PATH_TO_slurm-ddp
"""
import os
import re
import subprocess
import sys

src, cli = sys.argv[1], sys.argv[2]
readme = open(os.path.join(src, "README.md"), encoding="utf-8").read()
docs_dir = os.path.join(src, "docs")
docs = {name: open(os.path.join(docs_dir, name), encoding="utf-8").read()
        for name in sorted(os.listdir(docs_dir)) if name.endswith(".md")}
usage = docs["usage.md"]
every_page = [("README.md", readme)] + [("docs/" + n, t) for n, t in docs.items()]
failures = []


def check(ok, what):
    print(("ok: " if ok else "FAIL: ") + what)
    if not ok:
        failures.append(what)


# 1. The first screen (first 40 lines) gives the two commands, and they are real scripts.
first = "\n".join(readme.splitlines()[:40])
for cmd in ("bash scripts/demo.sh", "bash scripts/test.sh"):
    check(cmd in first, f"first screen shows '{cmd}'")
    path = os.path.join(src, cmd.split()[1])
    check(os.path.isfile(path), f"{cmd.split()[1]} exists")
    check(subprocess.run(["bash", "-n", path]).returncode == 0, f"{cmd.split()[1]} parses")
check("bash scripts/test.sh" in open(os.path.join(src, ".ci/run")).read(), ".ci/run runs the README's test command")

# 2. Paths in the tree that the pages name, and the pages their links point to.
for page, text in every_page:
    here = os.path.dirname(os.path.join(src, page))
    pattern = r"(?<![\w/.-])((?:examples|sbatch|scripts|tests|bench|docs|packaging|spank_plugin|libbootstrap|tools)/[\w./-]*[\w/])(?![\w*-])"
    for p in sorted(set(re.findall(pattern, text))):
        if p.startswith("build") or (p.startswith("bench/") and "." not in os.path.basename(p)):
            continue  # build outputs (bench/srun_rank) are named by the target, not a source path
        p = p.rstrip("/")
        check(any(os.path.exists(os.path.join(d, p)) for d in (src, here)), f"{page}: path {p} exists")
    for target in sorted(set(re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", text))):
        check(os.path.exists(os.path.normpath(os.path.join(here, target))), f"{page}: link {target} exists")

# 3. Every --ddp=VALUE in a code block parses; every plugin-argument line validates.
# Any fence opens a block (```python too): a fence the pattern skipped would pair the next ones
# wrongly and read the prose between two blocks as code.
blocks = "\n".join(b for _, text in every_page for b in re.findall(r"```[\w+-]*\n(.*?)```", text, re.S))
for value in sorted(set(re.findall(r"--ddp=([\w=,.-]+)", blocks))):
    r = subprocess.run([cli, "check-options", value], capture_output=True, text=True)
    check(r.returncode == 0, f"--ddp={value} is accepted ({r.stderr.strip()})")
for line in re.findall(r"^(?:required|optional) \S+spank_ddp\.so (.*)$", blocks, re.M):
    r = subprocess.run([cli, "check-options", "--site"] + line.split(), capture_output=True, text=True)
    check(r.returncode == 0, f"plugin arguments '{line}' are accepted ({r.stderr.strip()})")

# 4. slurm-ddp commands that need no Slurm run as shown.
for line in re.findall(r"^slurm-ddp ((?:hostnames|task-counts|check-options) .*?)(?:\s+#.*)?$", blocks, re.M):
    args = [a.strip("'") for a in re.findall(r"'[^']*'|\S+", line)]
    r = subprocess.run([cli] + args, capture_output=True, text=True)
    check(r.returncode == 0, f"`slurm-ddp {line}` succeeds ({r.stderr.strip()})")

# 5. Every row of the user options table is a key the parser accepts with a value from its
# "values" column (the first choice, the low end of a range) or alone.
options_section = usage.split("## Options", 1)[1].split("\n## ", 1)[0]
for key, values in re.findall(r"^\| `([a-z][a-z-]*)[^`]*` \| ([^|]*(?:\\\|[^|]*)*) \|", options_section, re.M):
    first = re.split(r"\\\||-| ", values.strip())[0] if values.strip() else ""
    tries = [key, f"{key}={first}", f"launcher,{key}={first}"]
    ok = any(subprocess.run([cli, "check-options", v], capture_output=True).returncode == 0 for v in tries)
    ok = ok or subprocess.run([cli, "check-options", "--site", f"{key}={first}"], capture_output=True).returncode == 0
    ok = ok or subprocess.run([cli, "check-options", "--site", f"{key}=20000-29999"], capture_output=True).returncode == 0
    check(ok, f"options table key '{key}' is known to the parser")

print(f"{len(failures)} failed" if failures else "README and docs in sync")
sys.exit(1 if failures else 0)
