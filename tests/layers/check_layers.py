#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The layering the build promises, checked on the sources.

usage: check_layers.py SOURCE_DIR

1. A file under libbootstrap/src/<layer>/ includes only headers of its own layer or of layers
   below it: core < os < topology < rendezvous < nccl < api. The plugin and the CLI sit on top;
   the plugin never includes the library's API or its NCCL layer (it runs in slurmstepd).
2. The core does no I/O and no system calls: none of the headers that bring them, no getenv.
3. Every SLURM_DDP_* name is spelled in core/contract.hpp only (comments aside).
Prints one line per violation and exits 1 when there is any.
"""
import re
import sys
from pathlib import Path

LAYERS = ["core", "os", "topology", "rendezvous", "nccl", "api"]
# What the plugin may not include (everything else below the API is fine).
PLUGIN_FORBIDDEN = {"api", "nccl"}
CORE_FORBIDDEN_HEADERS = re.compile(
    r"^(unistd\.h|fcntl\.h|dlfcn\.h|netdb\.h|poll\.h|pthread\.h|glob\.h|sys/.*|arpa/.*|"
    r"netinet/.*|fstream|iostream|cstdio|stdio\.h|thread|mutex|filesystem|hwloc\.h|nccl\.h|"
    r"cuda.*)$")
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def code_lines(path):
    """(line number, text without // comments) of a C/C++ file."""
    for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
        yield n, re.sub(r"//.*", "", line)


def main(root):
    root = Path(root)
    src = root / "libbootstrap" / "src"
    problems = []
    files = []
    for d in [src, root / "spank_plugin", root / "tools"]:
        files += sorted(p for p in d.rglob("*") if p.suffix in (".cpp", ".hpp", ".h", ".c"))
    if not files:
        problems.append(f"no sources found under {root}")
    for path in files:
        rel = path.relative_to(root)
        if path.is_relative_to(src):
            layer = path.relative_to(src).parts[0]
            if layer not in LAYERS:
                problems.append(f"{rel}: folder '{layer}' is not a layer ({', '.join(LAYERS)})")
                continue
            allowed = set(LAYERS[: LAYERS.index(layer) + 1])
        elif rel.parts[0] == "spank_plugin":
            layer, allowed = "plugin", set(LAYERS) - PLUGIN_FORBIDDEN
        else:
            layer, allowed = "tools", set(LAYERS)
        for n, line in code_lines(path):
            m = INCLUDE.match(line)
            if m:
                kind, header = m.groups()
                top = header.split("/")[0]
                if kind == '"' and top in LAYERS and top not in allowed:
                    problems.append(f"{rel}:{n}: {layer} includes \"{header}\" from the higher "
                                    f"layer '{top}'")
                if layer == "core" and kind == "<" and CORE_FORBIDDEN_HEADERS.match(header):
                    problems.append(f"{rel}:{n}: the core includes <{header}>; I/O and system "
                                    "calls belong in os/ or above")
            if layer == "core" and re.search(r"\bgetenv\b", line):
                problems.append(f"{rel}:{n}: the core calls getenv; take an EnvLookup")
            if re.search(r"SLURM_DDP_[A-Z]", line) and rel.as_posix() != \
                    "libbootstrap/src/core/contract.hpp":
                problems.append(f"{rel}:{n}: spells a SLURM_DDP_* name; use core/contract.hpp")
    for p in problems:
        print(p)
    print(f"{len(files)} files checked, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
