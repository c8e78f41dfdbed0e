#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The one reporter of bench/: every table of docs/performance.md from a raw file. No dependencies.

    python3 bench/report.py harness RESULTS...   # local fork harness: bootstrap_bench,
                                                 # tcpstore_bench.py, mpi_bcast (RESULT/MPIRUN/SKIP)
    python3 bench/report.py srun RESULTS         # real srun --ddp (bench/srun/srun_bench.sh --all:
                                                 # SRUN lines, with the harness's RESULT lines)
    python3 bench/report.py e2e RESULTS_DIR      # end to end (bench/e2e/e2e_launch.sh's run dir)
    python3 bench/report.py overhead RAW         # plugin overhead: 95 % intervals of the median
                                                 # ratios of bench/overhead/plugin_overhead.sh

Lines starting with '#' are a raw file's header (bench/lib/raw_header.sh) and are skipped.
harness: ours (two-level) within 1.25x of the authenticated floor (the fastest of its variants)
at every N, beside the best unauthenticated floor; at the largest N (1024 in the full run) >= 5x
faster than TCPStore, for the id; the same ratios for the second exchange (all-gather, or the
library's preflight).
srun: the real-launch table with the fork harness and the floors for the same N, and its goals.
e2e: checks every run (exit 0, one line per rank 0..W-1, world W, all-reduce sum W) and prints,
per size and method, the time from t0 until the LAST rank was past the all-reduce (floor: had
imported torch): median (min-max), the ratio of medians to (a), the median of the per-round
ratios (the methods are interleaved) and where the time went. Exit 1 if any run failed.
overhead: arms `none` (no plugin in plugstack.conf), `plain` (plugin loaded, no --ddp), `ddp`;
launches of one repetition are resampled together (fixed seed), so slow drift of the machine
hits both sides of a resample alike.
"""
import glob
import os
import random
import re
import statistics
import sys
from collections import defaultdict


# --- shared -----------------------------------------------------------------------------------
def raw_lines(path):
    """The data lines of a raw file: its header and comments left out."""
    with open(path, errors="replace") as f:
        for line in f:
            if not line.startswith("#"):
                yield line


def md_table(header, rows):
    """Prints one Markdown table: every table of the reporter goes through here."""
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(str(c) for c in row) + " |")


def ms(x):
    """Seconds -> milliseconds, three significant digits below 10 ms."""
    x = float(x) * 1e3
    return "%.3g" % x if x < 10 else "%.0f" % x


def srun_ms(x):
    return "-" if x is None else ("%.0f" % (x * 1e3) if x >= 0.1 else "%.1f" % (x * 1e3))


def ratio(a, b, key=None):
    """a / b of two medians (of result dicts when key is given); None where one is missing."""
    if key is not None:
        if not a or not b or a.get("ok") == "0" or b.get("ok") == "0":
            return None
        a, b = float(a[key + "_med"]), float(b[key + "_med"])
    return None if a is None or b is None or b == 0 else a / b


def fmt_ratio(r):
    return "-" if r is None else "%.2f" % r


# --- harness: the local fork harness --------------------------------------------------------
AUTH_FLOORS = ["authfloor", "authfloor-tree", "authfloor-prelisten", "authfloor-tree-prelisten"]
# The authenticated floor under the library's contract (a complete world before the id): shown,
# not a floor the goal is judged against.
AUTH_CONTRACT = ["authfloor-tree-barrier"]
FLOORS = ["floor", "floor-prelisten"]
ORDER = (["ours-2level", "ours-tree", "ours-preflight", "ours-flat"] + AUTH_FLOORS + AUTH_CONTRACT +
         FLOORS +
         ["tcpstore", "tcpstore-agent", "mpi"])
LABEL = {
    "ours-2level": "ours, two-level (N/8 nodes x 8), authenticated",
    "ours-tree": "ours, two-level with the node leaders in a k-ary tree (bootstrap_bench --fanout)",
    "ours-preflight": "ours, two-level, 2nd exchange = the library's preflight (gather of "
                      "~60-byte records to rank 0 + its verdict broadcast), as srun --ddp runs it",
    "ours-flat": "ours, flat (every rank TCP to rank 0), authenticated",
    "authfloor": "authenticated floor (auth_floor.c, C on Nettle): the same handshake (step tag, "
                 "nonces, HMAC-SHA256 proofs of the secret, the id only after the proof), every "
                 "rank over TCP to rank 0",
    "authfloor-tree": "authenticated floor in ours-2level's shape: N/8 nodes x 8, leaders over TCP "
                      "to rank 0, locals over an abstract Unix socket to their leader",
    "authfloor-prelisten": "authenticated floor, star, its listener opened before the start (not "
                           "deployable)",
    "authfloor-tree-prelisten": "authenticated floor, two-level, every listener opened before the "
                                "start (not deployable)",
    "authfloor-tree-barrier": "authfloor-tree under the library's contract: the id only once the "
                              "whole world is in (welcome, a leader's sealed 'node complete', then "
                              "the id in a message of its own)",
    "floor": "floor: bare 1-listener socket broadcast, unauthenticated",
    "floor-prelisten": "the floor with its listener opened before the start (not deployable: "
                       "shows what the race to listen() costs)",
    "tcpstore": "PyTorch TCPStore, ranks race the master (init_process_group env://)",
    "tcpstore-agent": "PyTorch TCPStore, server already listening (torchrun agent store)",
    "mpi": "MPI_Bcast / MPI_Allgather after MPI_Init + barrier (Open MPI)",
}



def harness_parse(paths):
    res = {}  # (impl, n) -> dict
    mpi = {}  # n -> list of (id, ag, launch)
    skipped = {}
    for p in paths:
        for line in raw_lines(p):
            if line.startswith("RESULT "):
                kv = dict(x.split("=", 1) for x in line.split()[1:])
                res[(kv["impl"], int(kv["n"]))] = kv
            elif line.startswith("MPIRUN "):
                kv = dict(x.split("=", 1) for x in line.split()[1:])
                mpi.setdefault(int(kv["n"]), []).append(
                    (float(kv["id"]), float(kv["ag"]), float(kv["launch"])))
            elif line.startswith("SKIP "):
                m = re.match(r"SKIP impl=(\S+) n=(\d+) (.*)", line.strip())
                if m:
                    skipped[(m.group(1), int(m.group(2)))] = m.group(3)
    for n, runs in mpi.items():
        ids, ags, la = [r[0] for r in runs], [r[1] for r in runs], [r[2] for r in runs]
        res[("mpi", n)] = {
            "impl": "mpi", "n": str(n), "reps": str(len(runs)), "ok": str(len(runs)),
            "id_med": statistics.median(ids), "id_min": min(ids), "id_max": max(ids),
            "ag_med": statistics.median(ags), "ag_min": min(ags), "ag_max": max(ags),
            "launch_med": statistics.median(la) if min(la) >= 0 else None,
        }
    return res, skipped



def harness_cell(kv, key):
    if kv is None:
        return "-"
    if kv.get("ok") == "0":
        return "FAILED"
    return "%s (%s-%s)" % (ms(kv[key + "_med"]), ms(kv[key + "_min"]), ms(kv[key + "_max"]))



def best_floor(res, n, names, key):
    """The variant among `names` with the smallest median at N for `key`, or None."""
    got = [(float(r[key + "_med"]), k) for k in names for r in [res.get((k, n))]
           if r and r.get("ok") != "0"]
    return min(got)[1] if got else None


def harness_floor_row(res, n):
    o = res.get(("ours-2level", n))
    a, f = best_floor(res, n, AUTH_FLOORS, "id"), best_floor(res, n, FLOORS, "id")
    ra, rf = res.get((a, n)), res.get((f, n))
    return [n, ms(o["id_med"]) if o and o.get("ok") != "0" else "-", a or "-",
            ms(ra["id_med"]) if ra else "-", fmt_ratio(ratio(o, ra, "id")),
            fmt_ratio(ratio(o, res.get((best_floor(res, n, AUTH_FLOORS, "ag"), n)), "ag")),
            f or "-", ms(rf["id_med"]) if rf else "-", fmt_ratio(ratio(o, rf, "id")),
            fmt_ratio(ratio(ra, rf, "id"))]


def harness_report(paths):
    res, skipped = harness_parse(paths)
    ns = sorted({n for _, n in res} | {n for _, n in skipped})
    impls = [i for i in ORDER if any((i, n) in res for n in ns)]
    print("Times in ms from the common start until the LAST rank holds the 128-byte id / has "
          "finished the second exchange (the 64-byte-per-rank allgather; for ours-preflight the "
          "preflight gather + verdict): median (min-max) over the repetitions.\n")
    print("| impl | " + " | ".join("N=%d id" % n + " | " + "N=%d 2nd" % n for n in ns) + " |")
    print("|---|" + "---|---|" * len(ns))
    for i in impls:
        row = []
        for n in ns:
            kv = res.get((i, n))
            if kv is None and (i, n) in skipped:
                row += ["skipped", skipped[(i, n)]]
            else:
                row += [harness_cell(kv, "id"), harness_cell(kv, "ag")]
        print("| %s | %s |" % (i, " | ".join(row)))
    print()
    for i in impls:
        reps = sorted({res[(i, n)]["reps"] for n in ns if (i, n) in res})
        print("- `%s`: %s (repetitions per point: %s)" % (i, LABEL.get(i, i), "/".join(reps)))
    if any(("mpi", n) in res and res[("mpi", n)].get("launch_med") for n in ns):
        print("- `mpi` from `mpirun` exec to every rank holding the id (includes process start-up"
              " and MPI_Init, unlike every other row): " +
              ", ".join("N=%d: %s ms" % (n, ms(res[("mpi", n)]["launch_med"]))
                        for n in ns if ("mpi", n) in res and res[("mpi", n)].get("launch_med")))
    print()
    print("Ratios of medians (>1 means ours is slower than the other for that ratio's direction "
          "as labelled):\n")
    print("| N | TCPStore / ours (id) | TCPStore / ours (ag) | TCPStore / ours-preflight (2nd) | "
          "TCPStore-agent / ours (id) | "
          "ours / floor (id) | ours / floor (ag) | ours-preflight / floor (2nd) | "
          "ours-flat / floor (id) | ours-flat / floor (ag)"
          " | ours / MPI (id) | ours / MPI (ag) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    ours = "ours-2level"

    def f(x):
        return "-" if x is None else "%.2f" % x

    for n in ns:
        o, fl, t, ta, of, m, op = (res.get((k, n)) for k in
                                   (ours, "floor", "tcpstore", "tcpstore-agent", "ours-flat", "mpi",
                                    "ours-preflight"))
        print("| %d | %s |" % (n, " | ".join(f(x) for x in (
            ratio(t, o, "id"), ratio(t, o, "ag"), ratio(t, op, "ag"), ratio(ta, o, "id"),
            ratio(o, fl, "id"), ratio(o, fl, "ag"), ratio(op, fl, "ag"),
            ratio(of, fl, "id"), ratio(of, fl, "ag"),
            ratio(o, m, "id"), ratio(o, m, "ag")))))
    # Against the authenticated floor: the fastest of its shapes at each N (whichever flatters
    # us least), beside the best unauthenticated one.
    if any((k, n) in res for k in AUTH_FLOORS for n in ns):
        print()
        print("Ours against the authenticated floor (the fastest of its variants at each N) and "
              "the unauthenticated one (the faster of floor and floor-prelisten), ratios of "
              "medians from this run:\n")
        md_table(["N", "ours id ms", "best auth floor", "its id ms", "ours / auth floor (id)",
                  "ours / auth floor (2nd)", "best floor", "its id ms", "ours / floor (id)",
                  "auth floor / floor (id)"],
                 [harness_floor_row(res, n) for n in ns if (ours, n) in res])
        for n in ns:
            r = best_floor(res, n, AUTH_FLOORS, "id")
            if r is None or (ours, n) not in res:
                continue
            x = ratio(res[(ours, n)], res[(r, n)], "id")
            if x is not None:
                print("- N=%d: ours within 1.25x of the authenticated floor (%s, id): %.2fx -> %s"
                      % (n, r, x, "MET" if x <= 1.25 else "NOT MET"))
    big = max((n for n in ns if (ours, n) in res), default=None)
    if big is not None:
        o, fl, t, ta, op = (res.get((k, big)) for k in
                            (ours, "floor", "tcpstore", "tcpstore-agent", "ours-preflight"))
        print()
        print("Goals at N=%d (the goal is stated for the id, the rest is context):" % big)
        for name, other in (("TCPStore", t), ("TCPStore-agent", ta)):
            for what, mine, key in (("id", o, "id"), ("allgather", o, "ag"),
                                    ("id + preflight vs its id + allgather", op, "ag")):
                r = ratio(other, mine, key)
                if r is not None:
                    print("- ours >= 5x faster than %s (%s): %.2fx -> %s" % (
                        name, what, r, "MET" if r >= 5 else "NOT MET"))
        # Beside it, the fastest bare floor of the run: whichever of the two has the smaller
        # median for this figure (the pre-listening one, as a rule).
        for what, mine, key in (("id", o, "id"), ("allgather", o, "ag"),
                                ("id + preflight vs its id + allgather", op, "ag")):
            best = best_floor(res, big, FLOORS, key)
            if best is None:
                continue
            r = ratio(mine, res.get((best, big)), key)
            if r is not None:
                print("- context, no goal (the authenticated floor is the goal's, above): ours / "
                      "the best unauthenticated floor, %s (%s): %.2fx" % (best, what, r))



# --- srun: real srun --ddp on the local cluster ---------------------------------------------
def srun_parse(path):
    srun, harness = {}, {}
    for line in raw_lines(path):
        w = line.split()
        if not w or w[0] not in ("SRUN", "RESULT"):
            continue
        kv = dict(x.split("=", 1) for x in w[1:] if "=" in x)
        if int(kv.get("ok", 0)) == 0:
            continue
        if w[0] == "SRUN":
            srun[(int(kv["nodes"]), kv["impl"][5:], int(kv["n"]))] = {
                k: float(v) for k, v in kv.items() if k not in ("impl",)}
        else:
            harness[(kv["impl"], int(kv["n"]))] = {k: float(v) for k, v in kv.items() if k != "impl"}
    return srun, harness



def srun_report(path):
    srun, harness = srun_parse(path)
    nodes = sorted({k[0] for k in srun})
    ns = sorted({k[2] for k in srun} | {k[1] for k in harness})
    h = lambda impl, n, key: harness.get((impl, n), {}).get(key)
    s = lambda k, t, n, key: srun.get((k, t, n), {}).get(key)

    print("Real `srun --ddp` (last rank, ms from the common start, median of the repetitions), with the\n"
          "fork harness and the floors for the same N from the same run:\n")
    print("| N | row | init | init + broadcast (id) | 2nd broadcast done (id2) | srun -> last task "
          "started | task start skew | CPU of all tasks, start to id, s | slurmstepd CPU, s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n in ns:
        for k in nodes:
            for t in ("tcp", "pmi2", "pmix"):
                r = srun.get((k, t, n))
                if not r:
                    continue
                print("| %d | srun %s, %d nodes | %s (%s-%s) | %s (%s-%s) | %s | %s | %s | %.2f | %.2f |" % (
                    n, t.upper() if t != "pmix" else "PMIx", k, srun_ms(r["init_med"]), srun_ms(r["init_min"]),
                    srun_ms(r["init_max"]), srun_ms(r["id_med"]), srun_ms(r["id_min"]), srun_ms(r["id_max"]),
                    srun_ms(r.get("id2_med")), srun_ms(r.get("launch_last")), srun_ms(r.get("launch_skew")),
                    r.get("cpu_id", 0), r.get("stepd_cpu", 0)))
        for impl, label in (("ours-preflight", "fork harness: id / id + preflight"),
                            ("ours-2level", "fork harness: id / id + all-gather"),
                            ("floor", "bare-socket floor: id / id + all-gather"),
                            ("floor-prelisten", "floor, listener pre-opened: id / + all-gather")):
            if (impl, n) in harness:
                print("| %d | %s | %s | %s | | | | | |" % (n, label, srun_ms(h(impl, n, "id_med")),
                                                        srun_ms(h(impl, n, "ag_med"))))
    print("\nGoals (ratios of medians from this one run):\n")
    print("| goal | measured | verdict |")
    print("|---|---|---|")

    def goal(name, r, ok, detail):
        verdict = "-" if r is None else ("**met**" if ok(r) else "**not met**")
        print("| %s | %s | %s |" % (name, detail if r is not None else "not measured", verdict))

    n = 1024
    base = h("ours-preflight", n, "ag_med")
    for k in nodes:
        r = ratio(s(k, "tcp", n, "id_med"), base)
        goal("TCP, %d nodes, N=%d: init + broadcast <= 1.5x harness id + preflight" % (k, n), r,
             lambda x: x <= 1.5, "%s / %s ms = %s" % (srun_ms(s(k, "tcp", n, "id_med")), srun_ms(base), fmt_ratio(r)))
    for k in nodes:
        r = ratio(s(k, "pmi2", n, "id_med"), s(k, "pmix", n, "id_med"))
        goal("PMIx, %d nodes, N=%d: >= 3x faster than PMI2 (init + broadcast)" % (k, n), r,
             lambda x: x >= 3, "PMI2 / PMIx = %s / %s ms = %s" % (
                 srun_ms(s(k, "pmi2", n, "id_med")), srun_ms(s(k, "pmix", n, "id_med")), fmt_ratio(r)))
        r = ratio(s(k, "pmix", n, "id_med"), s(k, "tcp", n, "id_med"))
        goal("PMIx, %d nodes, N=%d: within 2x of TCP" % (k, n), r, lambda x: x <= 2,
             "PMIx / TCP = %s" % fmt_ratio(r))
    if len(nodes) >= 2:
        lo, hi = nodes[0], nodes[-1]
        for t in ("tcp", "pmi2", "pmix"):
            r = ratio(s(hi, t, n, "id_med"), s(lo, t, n, "id_med"))
            goal("%s, N=%d: %d nodes within 1.3x of %d nodes" % (t, n, hi, lo), r,
                 lambda x: x <= 1.3, "%s / %s ms = %s" % (srun_ms(s(hi, t, n, "id_med")),
                                                         srun_ms(s(lo, t, n, "id_med")), fmt_ratio(r)))
    for n in (8, 64):
        r = ratio(h("ours-preflight", n, "ag_med"), h("floor", n, "ag_med"))
        goal("harness N=%d within 1.5x of the floor: id + preflight vs floor id + all-gather" % n, r,
             lambda x: x <= 1.5, "%s / %s ms = %s" % (srun_ms(h("ours-preflight", n, "ag_med")),
                                                     srun_ms(h("floor", n, "ag_med")), fmt_ratio(r)))
        r = ratio(h("ours-2level", n, "id_med"), h("floor", n, "id_med"))
        goal("harness N=%d within 1.5x of the floor: id vs id" % n, r, lambda x: x <= 1.5,
             "%s / %s ms = %s" % (srun_ms(h("ours-2level", n, "id_med")), srun_ms(h("floor", n, "id_med")),
                                  fmt_ratio(r)))



# --- e2e: launch to the first all-reduce ----------------------------------------------------
E2E_NAMES = {
    "floor": "floor: srun python3 e2e_rank.py --floor (import torch, exit)",
    "a": "(a) srun --ddp python e2e_rank.py",
    "b": "(b) srun wrapper: scontrol show hostnames + torchrun (static) per node",
    "c": "(c) srun torchrun --rdzv_backend=c10d per node",
    "d": "(d) srun python (Lightning Fabric's own SLURMEnvironment, no plugin)",
}
E2E_ORDER = ["floor", "a", "b", "c", "d"]
LINE = re.compile(r"E2E rank=(\d+) world=(\d+) sum=(\d+) start=([\d.]+) imported=([\d.]+) "
                  r"init=([\d.]+) done=([\d.]+)")



def e2e_parse(path):
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



def e2e_fmt(x):
    return f"{x:.2f}"


def e2e_report(root):
    runs, errors, late = {}, [], []
    for path in sorted(glob.glob(os.path.join(root, "2x*", "*.out"))):
        m, size, rep, res = e2e_parse(path)
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
        for m in E2E_ORDER:
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
            phases = [e2e_fmt(statistics.median(v[p] for v in reps.values()))
                      for p in ("start", "imported", "init", "wall")]
            print(f"| {size} | {E2E_NAMES[m]} | {len(reps)} | {e2e_fmt(med)} ({e2e_fmt(min(done))}-"
                  f"{e2e_fmt(max(done))}) | {ratio} | {pr} | " + " | ".join(phases) + " |")
    print("\nColumns after the ratios: medians, seconds from srun's start, of the LAST rank's "
          "first Python line (interpreter up; under (b)/(c) after the launcher), torch imported, "
          "init_process_group returned; and srun's exit.")
    # init_process_group of the last rank: about 1 s where a rank met PyTorch's TCPStore
    # reconnect back-off (bench/e2e/e2e_store_race.py), ~0 where the store was already listening.
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



# --- overhead: the plugin's launch overhead --------------------------------------------------
PAIRS = [("plain", "none"), ("ddp", "none"), ("ddp", "plain")]



def overhead_report(path):
    samples = defaultdict(lambda: defaultdict(list))
    for line in raw_lines(path):
        n, kind, seconds = line.split()
        samples[int(n)][kind].append(float(seconds))
    rng = random.Random(1)
    print("%-4s %-11s %5s %12s %22s %22s" % ("N", "ratio", "pairs", "median ratio",
                                             "95% interval (2000x)", "median paired diff"))
    for n in sorted(samples):
        for top, bottom in PAIRS:
            if top not in samples[n] or bottom not in samples[n]:
                continue
            a, b = samples[n][top], samples[n][bottom]
            m = min(len(a), len(b))
            a, b = a[:m], b[:m]
            ratio = statistics.median(a) / statistics.median(b)
            boot = []
            for _ in range(2000):
                idx = [rng.randrange(m) for _ in range(m)]
                boot.append(statistics.median([a[i] for i in idx]) /
                            statistics.median([b[i] for i in idx]))
            boot.sort()
            diff_ms = statistics.median([a[i] - b[i] for i in range(m)]) * 1000
            print("%-4d %-11s %5d %12.3f %12.3f - %-7.3f %+19.1f ms" %
                  (n, top + "/" + bottom, m, ratio, boot[50], boot[1949], diff_ms))



COMMANDS = {"harness": (harness_report, "RESULTS..."), "srun": (srun_report, "RESULTS"),
            "e2e": (e2e_report, "RESULTS_DIR"), "overhead": (overhead_report, "RAW")}


def main(argv):
    if len(argv) < 3 or argv[1] not in COMMANDS:
        sys.exit(__doc__)
    fn, _ = COMMANDS[argv[1]]
    if argv[1] == "harness":
        return fn(argv[2:]) or 0
    if len(argv) != 3:
        sys.exit("usage: bench/report.py %s %s" % (argv[1], COMMANDS[argv[1]][1]))
    return fn(argv[2]) or 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
