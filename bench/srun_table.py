#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Table and goals of `bench/srun_bench.sh --all` from its results file (SRUN and RESULT lines).

    python3 bench/srun_table.py /tmp/srun-bench-<time>.txt
"""
import sys


def parse(path):
    srun, harness = {}, {}
    for line in open(path):
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


def ms(x):
    return "-" if x is None else ("%.0f" % (x * 1e3) if x >= 0.1 else "%.1f" % (x * 1e3))


def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b


def fmt_ratio(r):
    return "-" if r is None else "%.2f" % r


def main():
    srun, harness = parse(sys.argv[1])
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
                    n, t.upper() if t != "pmix" else "PMIx", k, ms(r["init_med"]), ms(r["init_min"]),
                    ms(r["init_max"]), ms(r["id_med"]), ms(r["id_min"]), ms(r["id_max"]),
                    ms(r.get("id2_med")), ms(r.get("launch_last")), ms(r.get("launch_skew")),
                    r.get("cpu_id", 0), r.get("stepd_cpu", 0)))
        for impl, label in (("ours-preflight", "fork harness: id / id + preflight"),
                            ("ours-2level", "fork harness: id / id + all-gather"),
                            ("floor", "bare-socket floor: id / id + all-gather"),
                            ("floor-prelisten", "floor, listener pre-opened: id / + all-gather")):
            if (impl, n) in harness:
                print("| %d | %s | %s | %s | | | | | |" % (n, label, ms(h(impl, n, "id_med")),
                                                        ms(h(impl, n, "ag_med"))))
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
             lambda x: x <= 1.5, "%s / %s ms = %s" % (ms(s(k, "tcp", n, "id_med")), ms(base), fmt_ratio(r)))
    for k in nodes:
        r = ratio(s(k, "pmi2", n, "id_med"), s(k, "pmix", n, "id_med"))
        goal("PMIx, %d nodes, N=%d: >= 3x faster than PMI2 (init + broadcast)" % (k, n), r,
             lambda x: x >= 3, "PMI2 / PMIx = %s / %s ms = %s" % (
                 ms(s(k, "pmi2", n, "id_med")), ms(s(k, "pmix", n, "id_med")), fmt_ratio(r)))
        r = ratio(s(k, "pmix", n, "id_med"), s(k, "tcp", n, "id_med"))
        goal("PMIx, %d nodes, N=%d: within 2x of TCP" % (k, n), r, lambda x: x <= 2,
             "PMIx / TCP = %s" % fmt_ratio(r))
    if len(nodes) >= 2:
        lo, hi = nodes[0], nodes[-1]
        for t in ("tcp", "pmi2", "pmix"):
            r = ratio(s(hi, t, n, "id_med"), s(lo, t, n, "id_med"))
            goal("%s, N=%d: %d nodes within 1.3x of %d nodes" % (t, n, hi, lo), r,
                 lambda x: x <= 1.3, "%s / %s ms = %s" % (ms(s(hi, t, n, "id_med")),
                                                         ms(s(lo, t, n, "id_med")), fmt_ratio(r)))
    for n in (8, 64):
        r = ratio(h("ours-preflight", n, "ag_med"), h("floor", n, "ag_med"))
        goal("harness N=%d within 1.5x of the floor: id + preflight vs floor id + all-gather" % n, r,
             lambda x: x <= 1.5, "%s / %s ms = %s" % (ms(h("ours-preflight", n, "ag_med")),
                                                     ms(h("floor", n, "ag_med")), fmt_ratio(r)))
        r = ratio(h("ours-2level", n, "id_med"), h("floor", n, "id_med"))
        goal("harness N=%d within 1.5x of the floor: id vs id" % n, r, lambda x: x <= 1.5,
             "%s / %s ms = %s" % (ms(h("ours-2level", n, "id_med")), ms(h("floor", n, "id_med")),
                                  fmt_ratio(r)))


if __name__ == "__main__":
    main()
