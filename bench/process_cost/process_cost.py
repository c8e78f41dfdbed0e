#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""One rank's cost from exec to holding the id, beside a bare socket client.

The clients: a plain C program on the shipped libslurm_ddp.so (C API), the same on the library
linked with the shared C++ runtime and Nettle, the rendezvous alone per HMAC library, and the
floors.
Runs build/bench/process_cost/process_cost twice over every client it finds in the build:
timed (--reps, interleaved) and once under callgrind (instructions, repeatable on a loaded
machine). Prints the table and writes the raw output, headed by the commit, date, machine and
command, to --out.

  bench/process_cost/process_cost.py --build build [--reps 21] [--out bench/results/process-cost-<date>.txt]
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict

CLIENTS = [  # name, kind, binary (those not built are skipped)
    ("floor", "floor", "floor_client"),
    ("floor-c++", "floor", "floor_client_cxx"),
    ("capi", "capi", "capi_client"),
    ("capi-shared-runtime", "capi", "capi_client_shared_runtime"),
    ("nettle", "ours", "rank_client_nettle"),
    ("sodium", "ours", "rank_client_sodium"),
    ("openssl-noconfig", "ours", "rank_client_openssl_noconfig"),
    ("openssl", "ours", "rank_client_openssl"),
]
CRYPTO_OBJECTS = ("libnettle", "libhogweed", "libcrypto", "libsodium")


def sh(cmd):
    return subprocess.run(cmd, shell=True, capture_output=True, text=True).stdout.strip()


def header(argv):
    """bench/lib/raw_header.sh's four lines (commit, date, machine, command), then the title."""
    src = os.path.dirname(os.path.abspath(__file__))
    helper = os.path.join(src, "..", "lib", "raw_header.sh")
    out = subprocess.run(["bash", helper] + argv, capture_output=True, text=True, check=True)
    return out.stdout.splitlines() + [
        "# bench/process_cost: one rank's cost from exec to holding the id"]


def callgrind_by_object(path):
    """Self instructions (Ir) per object file and per function of the dynamic loader and of
    libslurm_ddp.so, from an uncompressed callgrind output."""
    per_obj = defaultdict(int)
    per_ld_fn = defaultdict(int)
    per_lib_fn = defaultdict(int)
    obj = "?"
    fn = "?"
    skip_next = False
    total = None
    with open(path) as f:
        for line in f:
            if skip_next:  # the inclusive cost of a call: counted at its callee
                skip_next = False
                continue
            if line.startswith("ob="):
                obj = line[3:].strip()
            elif line.startswith("fn="):
                fn = line[3:].strip()
            elif line.startswith("calls="):
                skip_next = True
            elif line.startswith(("summary:", "totals:")):
                total = int(line.split()[1])
            elif line[:1].isdigit() or line[:1] in "+-*":
                parts = line.split()
                if len(parts) >= 2:
                    per_obj[obj] += int(parts[1])
                    if "ld-linux" in obj:
                        per_ld_fn[fn] += int(parts[1])
                    elif "libslurm_ddp" in obj:
                        name = fn.replace("(anonymous namespace)", "{anon}").split("(")[0]
                        per_lib_fn[name] += int(parts[1])
    return per_obj, per_ld_fn, per_lib_fn, total


def short(obj):
    return os.path.basename(obj) if obj != "?" else obj


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--reps", type=int, default=21)
    ap.add_argument("--out", default="")
    a = ap.parse_args()
    bindir = os.path.join(a.build, "bench", "process_cost")
    driver = os.path.join(bindir, "process_cost")
    if not os.access(driver, os.X_OK):
        sys.exit(f"process_cost.py: {driver} is missing: build the target process_cost_all "
                 f"(cmake -DSDDP_BUILD_BENCH=ON) or pass --build <dir>")
    clients = [(n, k, os.path.abspath(os.path.join(bindir, b))) for n, k, b in CLIENTS
               if os.access(os.path.join(bindir, b), os.X_OK)]
    specs = [f"{n}={k}:{p}" for n, k, p in clients]
    lines = header([os.path.relpath(sys.argv[0])] + sys.argv[1:])
    for n, _, p in clients:
        libs = sh(f"ldd {p} | awk '{{print $1}}' | grep -v vdso | tr '\\n' ' '")
        lines.append(f"# {n}: {os.path.basename(p)} loads {libs}")

    timed = subprocess.run([driver, "--reps", str(a.reps)] + specs, capture_output=True,
                           text=True, timeout=600)
    lines += ["", "## timed: " + " ".join([driver, "--reps", str(a.reps)] + specs)]
    lines += timed.stdout.splitlines() + [l for l in timed.stderr.splitlines()]
    res = {}
    for l in timed.stdout.splitlines():
        if l.startswith("RESULT"):
            kv = dict(x.split("=", 1) for x in l.split()[1:])
            res[kv["name"]] = kv

    ir = {}
    if shutil.which("valgrind"):
        tmp = tempfile.mkdtemp(prefix="process-cost-")
        wrap = (f"valgrind --tool=callgrind --compress-strings=no --compress-pos=no "
                f"--callgrind-out-file={tmp}/%n.out")
        cg = subprocess.run([driver, "--reps", "1", "--wrap", wrap] + specs, capture_output=True,
                            text=True, timeout=600)
        lines += ["", "## callgrind: " + " ".join([driver, "--reps", "1", "--wrap", repr(wrap)] + specs)]
        lines += [l for l in cg.stdout.splitlines() if l.startswith("REP")]
        lines += [l for l in cg.stderr.splitlines() if l.startswith("process_cost")]
        for n, _, _ in clients:
            f = os.path.join(tmp, f"{n}.out")
            if not os.path.exists(f):
                lines.append(f"# {n}: no callgrind output")
                continue
            per_obj, per_ld_fn, per_lib_fn, total = callgrind_by_object(f)
            ir[n] = (total or sum(per_obj.values()), per_obj)
            lines.append(f"callgrind {n}: total Ir {ir[n][0]}")
            for o, v in sorted(per_obj.items(), key=lambda x: -x[1])[:8]:
                lines.append(f"    {v:>12,}  {short(o)}")
            lines.append(f"  {n}: ld.so by function (self Ir)")
            for fn, v in sorted(per_ld_fn.items(), key=lambda x: -x[1])[:6]:
                lines.append(f"    {v:>12,}  {fn}")
            if per_lib_fn:
                lines.append(f"  {n}: libslurm_ddp.so by function (self Ir)")
                for fn, v in sorted(per_lib_fn.items(), key=lambda x: -x[1])[:8]:
                    lines.append(f"    {v:>12,}  {fn}")
        shutil.rmtree(tmp, ignore_errors=True)

    floor_cpu = float(res.get("floor", {}).get("cpu_med", "nan"))
    floor_ir = ir.get("floor", (0, {}))[0]
    lines += ["", "| client | CPU ms exec to id, median (min) | x floor | wall ms, median |"
              " Ir total | x floor | Ir in ld.so | Ir in libslurm_ddp.so | Ir in a shared crypto library |",
              "|---|---|---|---|---|---|---|---|---|"]
    for n, _, _ in clients:
        r = res.get(n)
        if not r:
            continue
        cpu = float(r["cpu_med"])
        tot, per_obj = ir.get(n, (0, {}))
        ld = sum(v for o, v in per_obj.items() if "ld-linux" in o)
        cr = sum(v for o, v in per_obj.items() if any(c in o for c in CRYPTO_OBJECTS))
        lib = sum(v for o, v in per_obj.items() if "libslurm_ddp" in o)
        lines.append(
            f"| {n} | {cpu:.3f} ({float(r['cpu_min']):.3f}) | {cpu / floor_cpu:.2f} | "
            f"{float(r['wall_med']):.3f} | {tot:,} | "
            f"{(tot / floor_ir if floor_ir else float('nan')):.2f} | {ld:,} | {lib:,} | {cr:,} |")
    lines.append(f"# load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    return 0 if timed.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
