#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Table of bench/e2e_launch.sh's runs: python3 bench/e2e_report.py RESULTS_DIR

Reads RESULTS_DIR/2xK/REP-METHOD.out (a "RUN method= size= rep= rc= t0= t1=" line, then the
step's output with one "E2E rank= world= sum= start= imported= init= done=" line per rank),
checks every run (exit 0, one line per rank 0..W-1, world W, all-reduce sum W) and prints, per
size and method, the time from t0 until the LAST rank was past the all-reduce (for the floor:
had imported torch): median (min-max), the ratio of medians to (a), the median of the
per-round ratios (the methods are interleaved, so round r of every method saw similar load),
and where the time went (medians of the last rank's interpreter start, torch imported, init
done; the srun wall time). Exit 1 if any run failed.
"""
import glob
import os
import re
import statistics
import sys

NAMES = {
    "floor": "floor: srun python3 e2e_rank.py --floor (import torch, exit)",
    "a": "(a) srun --ddp python e2e_rank.py",
    "b": "(b) srun wrapper: scontrol show hostnames + torchrun (static) per node",
    "c": "(c) srun torchrun --rdzv_backend=c10d per node",
    "d": "(d) srun python (Lightning Fabric's own SLURMEnvironment, no plugin)",
}
ORDER = ["floor", "a", "b", "c", "d"]
LINE = re.compile(r"E2E rank=(\d+) world=(\d+) sum=(\d+) start=([\d.]+) imported=([\d.]+) "
                  r"init=([\d.]+) done=([\d.]+)")


def parse(path):
    """-> (method, size, rep, dict of phase -> seconds from t0) or (method, size, rep, error)."""
    with open(path, errors="replace") as f:
        text = f.read()
    head = dict(kv.split("=", 1) for kv in text.splitlines()[0].split()[1:])
    m, size, rep = head["method"], head["size"], int(head["rep"])
    k = int(size.split("x")[1])
    world = 2 * k
    t0, t1 = float(head["t0"]), float(head["t1"])
    tail = " | ".join(text.splitlines()[-3:])
    ranks = {}
    # finditer over the whole text: the launchers' --tee relay sometimes joins two ranks' lines.
    for g in LINE.finditer(text):
        r, w, s = int(g[1]), int(g[2]), int(g[3])
        if r in ranks:
            return m, size, rep, f"rank {r} twice"
        if w != world:
            return m, size, rep, f"rank {r}: world {w}, expected {world}"
        if m != "floor" and s != world:
            return m, size, rep, f"rank {r}: all-reduce sum {s}, expected {world}"
        ranks[r] = [float(x) for x in g.groups()[3:]]
    if sorted(ranks) != list(range(world)):
        why = f"{len(ranks)} result lines, expected ranks 0..{world - 1}"
        if head["rc"] != "0":
            why = f"exit {head['rc']}, {why}: {tail}"
        return m, size, rep, why
    last = [max(v[i] for v in ranks.values()) - t0 for i in range(4)]
    # Every rank had its result: the interval measured is complete even if the step then
    # failed on the way out (seen: torchrun's worker aborting in gloo's teardown at exit).
    late = f"exit {head['rc']} after every rank had its result: {tail}" if head["rc"] != "0" else ""
    return m, size, rep, {"start": last[0], "imported": last[1], "init": last[2],
                          "done": last[3], "wall": t1 - t0, "late": late}


def fmt(x):
    return f"{x:.2f}"


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    root = sys.argv[1]
    runs, errors, late = {}, [], []
    for path in sorted(glob.glob(os.path.join(root, "2x*", "*.out"))):
        m, size, rep, res = parse(path)
        if isinstance(res, str):
            errors.append(f"{size} rep {rep} {m}: {res}")
        else:
            if res["late"]:
                late.append(f"{size} rep {rep} {m}: {res['late']}")
            runs.setdefault(size, {}).setdefault(m, {})[rep] = res
    header = os.path.join(root, "header.txt")
    if os.path.exists(header):
        print(open(header).read().rstrip())
    print("Seconds from srun's start until the last rank is past init_process_group(gloo) + one "
          "all-reduce (floor: has imported torch); median (min-max) over the rounds. Ratio > 1: "
          "slower than (a).\n")
    print("| size | method | runs | last rank done, s | ratio to (a), medians | ratio to (a), "
          "per round | python up | torch imported | init done | srun exits |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    sizes = sorted(runs, key=lambda s: int(s.split("x")[1]))
    for size in sizes:
        by = runs[size]
        a = by.get("a", {})
        a_med = statistics.median(v["done"] for v in a.values()) if a else None
        for m in ORDER:
            if m not in by:
                continue
            reps = by[m]
            done = [v["done"] for v in reps.values()]
            med = statistics.median(done)
            ratio = f"{med / a_med:.2f}" if a_med else "-"
            paired = [reps[r]["done"] / a[r]["done"] for r in reps if r in a]
            pr = f"{statistics.median(paired):.2f}" if paired and m != "a" else "-"
            if m == "a":
                ratio = "1"
            phases = [fmt(statistics.median(v[p] for v in reps.values()))
                      for p in ("start", "imported", "init", "wall")]
            print(f"| {size} | {NAMES[m]} | {len(reps)} | {fmt(med)} ({fmt(min(done))}-"
                  f"{fmt(max(done))}) | {ratio} | {pr} | " + " | ".join(phases) + " |")
    print("\nColumns after the ratios: medians, seconds from srun's start, of the LAST rank's "
          "first Python line (interpreter up; under (b)/(c) after the launcher), torch imported, "
          "init_process_group returned; and srun's exit.")
    # init_process_group of the last rank: about 1 s where a rank met PyTorch's TCPStore
    # reconnect back-off (bench/e2e_store_race.py), ~0 where the store was already listening.
    print("\nLast rank to return from init_process_group minus last rank to import torch, s, "
          "per round:")
    for size in sizes:
        for m in ("a", "b", "c", "d"):
            reps = runs[size].get(m, {})
            if reps:
                vals = " ".join(f"{reps[r]['init'] - reps[r]['imported']:.2f}" for r in sorted(reps))
                print(f"  {size} {m}: {vals}")
    print()
    for size in sizes:
        a = runs[size].get("a")
        if not a:
            continue
        a_med = statistics.median(v["done"] for v in a.values())
        for m in ("b", "c", "d"):
            if m in runs[size]:
                o = statistics.median(v["done"] for v in runs[size][m].values())
                verdict = "met" if a_med <= o else f"NOT met: (a) slower by {a_med - o:.2f} s"
                print(f"GOAL size={size} a={a_med:.3f} {m}={o:.3f} ratio={o / a_med:.2f} {verdict}")
    if late:
        print("\nMeasured, but the step failed after every rank had its result (counted above):")
        for e in late:
            print("  " + e)
    if errors:
        print("\nFAILED runs (not counted):")
        for e in errors:
            print("  " + e)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
