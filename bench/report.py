#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Merges the RESULT lines of bootstrap_bench / tcpstore_bench.py and the MPIRUN lines of
mpi_bcast into one Markdown table with ratios. No dependencies.

    python3 bench/report.py results.txt [more.txt ...]

Goals checked (at the largest N measured, 1024 in the full run):
  ours (two-level) >= 5x faster than TCPStore, and within 1.5x of the floor, for the id; the same
  ratios are printed for the second exchange (allgather, or the library's preflight).
"""
import re
import statistics
import sys

ORDER = ["ours-2level", "ours-preflight", "ours-flat", "floor", "floor-prelisten", "tcpstore", "tcpstore-agent", "mpi"]
LABEL = {
    "ours-2level": "ours, two-level (N/8 nodes x 8), authenticated",
    "ours-preflight": "ours, two-level, 2nd exchange = the library's preflight (gather of "
                      "~60-byte records to rank 0 + its verdict broadcast), as srun --ddp runs it",
    "ours-flat": "ours, flat (every rank TCP to rank 0), authenticated",
    "floor": "floor: bare 1-listener socket broadcast, unauthenticated",
    "floor-prelisten": "the floor with its listener opened before the start (not deployable: "
                       "shows what the race to listen() costs)",
    "tcpstore": "PyTorch TCPStore, ranks race the master (init_process_group env://)",
    "tcpstore-agent": "PyTorch TCPStore, server already listening (torchrun agent store)",
    "mpi": "MPI_Bcast / MPI_Allgather after MPI_Init + barrier (Open MPI)",
}


def parse(paths):
    res = {}  # (impl, n) -> dict
    mpi = {}  # n -> list of (id, ag, launch)
    skipped = {}
    for p in paths:
        for line in open(p, errors="replace"):
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


def ms(x):
    x = float(x) * 1e3
    return "%.3g" % x if x < 10 else "%.0f" % x


def cell(kv, key):
    if kv is None:
        return "-"
    if kv.get("ok") == "0":
        return "FAILED"
    return "%s (%s-%s)" % (ms(kv[key + "_med"]), ms(kv[key + "_min"]), ms(kv[key + "_max"]))


def ratio(a, b, key):
    if not a or not b or a.get("ok") == "0" or b.get("ok") == "0":
        return None
    return float(a[key + "_med"]) / float(b[key + "_med"])


def main():
    res, skipped = parse(sys.argv[1:])
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
                row += [cell(kv, "id"), cell(kv, "ag")]
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
        for what, mine, key in (("id", o, "id"), ("allgather", o, "ag"),
                                ("id + preflight vs its id + allgather", op, "ag")):
            r = ratio(mine, fl, key)
            if r is not None:
                print("- ours within 1.5x of the floor (%s): %.2fx -> %s" % (
                    what, r, "MET" if r <= 1.5 else "NOT MET"))


if __name__ == "__main__":
    main()
