#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The layering the build promises, checked on the sources.

usage: check_layers.py SOURCE_DIR

1. A file under libbootstrap/src/<layer>/ includes only headers of its own layer or of layers
   below it: core < os < topology < rendezvous < nccl < api. The public headers
   (libbootstrap/include/slurm_ddp/) count as the api layer. The plugin and the CLI sit on top;
   the plugin never includes the library's API or its NCCL layer (it runs in slurmstepd).
   Relative includes ("../rendezvous/x.hpp", "./x.hpp") are resolved against the including
   file's folder and held to the same rule; one that leaves libbootstrap/src/ from a file inside
   it is an error of its own.
2. The core does no I/O and no system calls: none of the headers that bring them, no getenv.
   The wire protocol that the rendezvous owns (libbootstrap/src/rendezvous/protocol/) is held to
   the same rule, and includes only the core and its own folder.
3. Every SLURM_DDP_* name is spelled in core/contract/contract.hpp only (comments aside). Adjacent string
   literals are joined first, as the compiler does, so "SLURM_" "DDP_X" counts as a spelling.
Prints one line per violation and exits 1 when there is any.

Run by ctest as `layers_respected` (tests/CMakeLists.txt); tests/layers/test_check_layers.py
(ctest `layers_check_selftest`) feeds it one violation of each kind.
"""
import os
import re
import sys
from pathlib import Path

LAYERS = ["core", "os", "topology", "rendezvous", "nccl", "api"]
# What the plugin may not include (everything else below the API is fine).
PLUGIN_FORBIDDEN = {"api", "nccl"}
# The public headers are the API's face: including them is including the api layer.
PUBLIC_HEADER_DIR = "slurm_ddp"
CONTRACT = "libbootstrap/src/core/contract/contract.hpp"
# Folders outside core/ that are pure all the same, and what they may include.
PURE_FOLDERS = {"rendezvous/protocol": ("core/", "rendezvous/protocol/")}
CORE_FORBIDDEN_HEADERS = re.compile(
    r"^(unistd\.h|fcntl\.h|dlfcn\.h|netdb\.h|poll\.h|pthread\.h|glob\.h|sys/.*|arpa/.*|"
    r"netinet/.*|fstream|iostream|cstdio|stdio\.h|thread|mutex|filesystem|hwloc\.h|nccl\.h|"
    r"cuda.*)$")
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
DDP_NAME = re.compile(r"SLURM_DDP_[A-Z]")
GETENV = re.compile(r"\b(secure_)?getenv\b")
# A string literal with its optional encoding prefix, as left by strip_comments.
STRING = re.compile(r'(?:u8|u|U|L)?"(?:\\.|[^"\\\n])*"')
ADJACENT = re.compile(r'(?:u8|u|U|L)?"(?:\\.|[^"\\\n])*"(?:\s*(?:u8|u|U|L)?"(?:\\.|[^"\\\n])*")+')


def strip_comments(text):
    """The text with // and /* */ comments blanked (newlines kept, so line numbers hold).

    String and character literals are walked over, so "http://" or '"' do not open a comment or
    a string; a raw string R"d(...)d" is kept whole."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" ")
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(" " + "\n" * text.count("\n", i, j))
            i = j
        elif c == '"':
            word = re.search(r"[A-Za-z0-9_]*$", text[max(0, i - 3):i]).group(0)
            m = re.match(r'"([^()\\\s]{0,16})\(', text[i:]) if word.endswith("R") else None
            if m:
                end = text.find(")" + m.group(1) + '"', i)
                j = n if end < 0 else end + len(m.group(1)) + 2
            else:
                j = i + 1
                while j < n and text[j] not in '"\n':
                    j += 2 if text[j] == "\\" else 1
                j += 1
            out.append(text[i:j])
            i = j
        elif c == "'":
            word = re.search(r"[A-Za-z0-9_.]*$", text[max(0, i - 32):i]).group(0)
            if word[:1].isdigit():  # a digit separator, 1'000'000
                out.append(c)
                i += 1
                continue
            j = i + 1
            while j < n and text[j] not in "'\n":
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def join_literals(text):
    """Adjacent string literals made one, as translation phase 6 does; the newlines between them
    move after the joined literal so line numbers hold."""
    def join(m):
        parts = [s[s.index('"') + 1:-1] for s in STRING.findall(m.group(0))]
        return '"' + "".join(parts) + '"' + "\n" * m.group(0).count("\n")
    return ADJACENT.sub(join, text)


def include_target(header, path, src, root):
    """(layer the quoted include lands in or None, error text or None)."""
    if header.split("/")[0] in (".", ".."):
        target = Path(os.path.normpath(path.parent / header))
        if target.is_relative_to(src):
            return target.relative_to(src).parts[0], None
        if path.is_relative_to(src):
            return None, (f'includes "{header}", which resolves to '
                          f"{os.path.relpath(target, root)}, outside libbootstrap/src/")
        return None, None
    norm = os.path.normpath(header)
    if norm.split(os.sep)[0] == "..":
        return None, f'includes "{header}", which climbs out of the include path'
    top = norm.split(os.sep)[0]
    if top == PUBLIC_HEADER_DIR:
        return "api", None
    return (top if top in LAYERS else None), None


def main(root):
    root = Path(root).resolve()
    src = root / "libbootstrap" / "src"
    problems = []
    files = []
    for d in [src, root / "spank_plugin", root / "tools"]:
        if d.is_dir():
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
        inside = path.relative_to(src).as_posix() if path.is_relative_to(src) else ""
        pure_folder = next((f for f in PURE_FOLDERS if inside.startswith(f + "/")), None)
        pure = layer == "core" or pure_folder is not None
        code = strip_comments(path.read_text(errors="replace"))
        for n, line in enumerate(code.splitlines(), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            kind, header = m.groups()
            if kind == '"':
                top, error = include_target(header, path, src, root)
                if error:
                    problems.append(f"{rel}:{n}: {layer} {error}")
                elif top and top not in allowed:
                    problems.append(f"{rel}:{n}: {layer} includes \"{header}\" from the higher "
                                    f"layer '{top}'")
                elif pure_folder and top and not os.path.normpath(
                        os.path.relpath(path.parent / header, src) if header.startswith(".")
                        else header).startswith(PURE_FOLDERS[pure_folder]):
                    problems.append(f"{rel}:{n}: {pure_folder}/ is pure and includes \"{header}\"; "
                                    f"it may include only {' and '.join(PURE_FOLDERS[pure_folder])}")
            else:
                top = os.path.normpath(header).split(os.sep)[0]
                top = "api" if top == PUBLIC_HEADER_DIR else top
                if top in LAYERS and top not in allowed:
                    problems.append(f"{rel}:{n}: {layer} includes <{header}> from the higher "
                                    f"layer '{top}'")
                if pure and CORE_FORBIDDEN_HEADERS.match(header):
                    problems.append(f"{rel}:{n}: the core includes <{header}>; I/O and system "
                                    "calls belong in os/ or above")
        for n, line in enumerate(join_literals(code).splitlines(), 1):
            if pure and GETENV.search(line):
                problems.append(f"{rel}:{n}: the core calls getenv; take an EnvLookup")
            if DDP_NAME.search(line) and rel.as_posix() != CONTRACT:
                problems.append(f"{rel}:{n}: spells a SLURM_DDP_* name; use core/contract/contract.hpp")
    for p in problems:
        print(p)
    print(f"{len(files)} files checked, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
