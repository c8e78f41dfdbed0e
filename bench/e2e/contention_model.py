#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What the end-to-end comparison (bench/e2e/e2e_launch.sh) would show where every rank has a core
of its own, from what this 2-core machine can measure: a model of the contention, and its error.

On the 2-core test machine every rank of a 2 x K step shares the same 2 cores, so the time to the
first all-reduce is dominated by 2K interpreters importing torch at once, a cost no launcher adds
and none can avoid; the launchers (torchrun) first import torch themselves, then start their
workers. This script

  1. measures P concurrent `import torch.distributed` on this machine (P = 1, 2, 4, 8, 16, all
     started at one instant as srun starts a step's tasks), each process reporting when its
     import finished and its CPU (user + system), with OMP_NUM_THREADS unset (srun, srun --ddp)
     and set to 1 (what torchrun gives its workers), the arms interleaved;
  2. states the model, in CPU seconds (which the machine's other work blurs far less than wall
     time): P imports started at once on C cores take max(1, P / C) * w(P), with w(P) the CPU one
     import costs while P run (measured: memory and page-cache contention raise it above w(1)),
     and its error against the measured import phase at every P;
  3. applies it to an e2e raw file (the table bench/report.py e2e prints): for each size and
     method, the import phase measured there (last rank's "torch imported" minus its "python
     up") against the model's, the model's error on those points, and each method's time with
     a core per rank: launch to Python up, one import that shares no core (w(1), or w(K) where
     a node's K imports still contend for memory), then init and the all-reduce as measured.

    python3 bench/e2e/contention_model.py --python PY --e2e RAW [--ps 1,2,4,8,16] [--reps 3]
        [--cores N] > OUT       # OUT a new raw file, header from bench/lib/raw_header.sh
    python3 bench/e2e/contention_model.py --e2e RAW --from OUT   # the model again from OUT's
                                                                  # IMPORT lines, no new runs
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHILD = ("import time, resource; t0 = time.time(); import torch.distributed; t1 = time.time(); "
         "r = resource.getrusage(resource.RUSAGE_SELF); "
         "print('%.6f %.6f %.6f' % (t0, t1, r.ru_utime + r.ru_stime), flush=True)")


def one_round(py, p, omp):
    """P interpreters started at one instant; -> (import phase, [cpu s], last start s): the import
    phase as the e2e table has it, the last import done minus the last interpreter up."""
    env = dict(os.environ)
    env.pop("OMP_NUM_THREADS", None)
    if omp is not None:
        env["OMP_NUM_THREADS"] = omp
    env["PYTHONWARNINGS"] = "ignore"
    t_spawn = time.time()
    procs = [subprocess.Popen([py, "-c", CHILD], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              env=env, text=True) for _ in range(p)]
    outs = [pr.communicate()[0].split() for pr in procs]
    if any(pr.returncode != 0 or len(o) != 3 for pr, o in zip(procs, outs)):
        raise SystemExit("contention_model: a child failed to import torch with %s" % py)
    last_up = max(float(o[0]) for o in outs)
    phase = max(float(o[1]) for o in outs) - last_up
    return phase, [float(o[2]) for o in outs], last_up - t_spawn


def measure(py, ps, reps):
    rows = []
    for rep in range(1, reps + 1):
        for p in ps:
            for omp in (None, "1"):
                phase, cpus, up = one_round(py, p, omp)
                line = ("IMPORT p=%d omp=%s rep=%d phase_s=%.3f cpu_med_s=%.3f cpu_sum_s=%.3f "
                        "last_up_s=%.3f load1=%s" % (
                            p, omp or "unset", rep, phase, statistics.median(cpus), sum(cpus), up,
                            open("/proc/loadavg").read().split()[0]))
                print(line, flush=True)
                rows.append(dict(kv.split("=", 1) for kv in line.split()[1:]))
    return rows


def read_imports(path):
    rows = []
    for line in open(path):
        if line.startswith("IMPORT "):
            rows.append(dict(kv.split("=", 1) for kv in line.split()[1:]))
    return rows


def e2e_rows(path):
    """(size, method letter) -> dict of done, up, imported, init (medians, s) from the table."""
    out = {}
    for line in open(path, errors="replace"):
        m = re.match(r"\| (2x\d+) \| (floor|\(([a-d])\))[^|]*\| \d+ \| ([\d.]+) \(", line)
        if not m:
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        key = (m.group(1), m.group(3) or "floor")
        out[key] = {"done": float(cells[3].split()[0]), "up": float(cells[6]),
                    "imported": float(cells[7]), "init": float(cells[8])}
    return out


def pct(x):
    return "%+.0f %%" % (x * 100)


def model(imports, e2e_path, cores):
    def med(p, omp, key):
        v = [float(r[key]) for r in imports if int(r["p"]) == p and r["omp"] == omp]
        return statistics.median(v) if v else None

    ps = sorted({int(r["p"]) for r in imports})
    loads = sorted(float(r["load1"]) for r in imports)
    # The model is in CPU seconds, which other work on the machine blurs far less than wall
    # time: P imports started at once on C cores take max(1, P / C) * w(P), w(P) the CPU one
    # import costs with P of them running (memory and page-cache contention raise it above w(1)).
    print("\n# 1. P concurrent imports on %d cores (load average %.1f-%.1f while measuring): the "
          "import phase (last import done minus last interpreter up, s), the CPU per process w(P) "
          "and of all, medians over the rounds; the model max(1, P/C) w(P)" % (
              cores, loads[0], loads[-1]))
    print("| P | OMP_NUM_THREADS | import phase | w(P), CPU per process | w(P) / w(1) | CPU of all "
          "| model | model error |")
    print("|---|---|---|---|---|---|---|---|")
    errs1 = []
    for omp in ("unset", "1"):
        w1 = med(1, omp, "cpu_med_s")
        if w1 is None:
            continue
        for p in ps:
            got = med(p, omp, "phase_s")
            wp = med(p, omp, "cpu_med_s")
            pred = max(1.0, p / cores) * wp
            errs1.append(got / pred - 1)
            print("| %d | %s | %.2f | %.2f | %.2f | %.1f | %.2f | %s |" % (
                p, omp, got, wp, wp / w1, med(p, omp, "cpu_sum_s"), pred, pct(got / pred - 1)))
    if errs1:
        print("\nmodel error over these points: %s to %s (the wall times carry the machine's "
              "other work; the CPU columns much less)" % (pct(min(errs1)), pct(max(errs1))))
    if not e2e_path or med(1, "unset", "cpu_med_s") is None:
        return

    def w_at(p):
        """w(P) at the P measured nearest below or at p (OMP_NUM_THREADS unset, as srun)."""
        q = max([x for x in ps if x <= p] or [ps[0]])
        return med(q, "unset", "cpu_med_s"), q

    rows = e2e_rows(e2e_path)
    print("\n# 2. The e2e raw file's import phases (last rank's torch imported minus its python "
          "up, s) against the model on %d cores, w(P) from part 1 at the same P" % cores)
    print("| size | method | ranks importing at once | measured | model | model error |")
    print("|---|---|---|---|---|---|")
    errs = []
    for (size, m), r in sorted(rows.items(), key=lambda kv: (int(kv[0][0][2:]), kv[0][1])):
        if m == "d":
            continue  # Lightning imports more than torch: not this model's w
        p = 2 * int(size.split("x")[1])
        wp, _ = w_at(p)
        phase = r["imported"] - r["up"]
        pred = max(1.0, p / cores) * wp
        errs.append(phase / pred - 1)
        print("| %s | %s | %d | %.2f | %.2f | %s |" % (size, m, p, phase, pred, pct(phase / pred - 1)))
    print("\nmodel error over those points: median %s, range %s to %s" % (
        pct(statistics.median(errs)), pct(min(errs)), pct(max(errs))))
    w1 = med(1, "unset", "cpu_med_s")
    print("\n# 3. A core per rank (each node's ranks on cores of their own): launch to python up "
          "as measured (under torchrun after the launcher's own import: one launcher per node, "
          "which had a core to itself here already), then one import that shares no core, "
          "w(1) = %.2f s to w(K) when a node's K imports still contend for memory, then init and "
          "the all-reduce as measured; Lightning's (d) import phase divided by its sharing factor. "
          "Seconds; the ratio at w(1)" % w1)
    print("| size | method | measured on %d cores | predicted, w(1) | predicted, w(K) | method / (a) |"
          % cores)
    print("|---|---|---|---|---|---|")
    for size in sorted({k[0] for k in rows}, key=lambda z: int(z[2:])):
        k = int(size.split("x")[1])
        share = max(1.0, 2 * k / cores)
        wk, _ = w_at(k)
        pred = {}
        for m in ("floor", "a", "b", "c", "d"):
            r = rows.get((size, m))
            if r is None:
                continue
            post = r["done"] - r["imported"]
            if m == "d":
                own = (r["imported"] - r["up"]) / share
                pred[m] = (r["up"] + own + post, r["up"] + own * wk / w1 + post)
            else:
                pred[m] = (r["up"] + w1 + post, r["up"] + wk + post)
        for m, v in pred.items():
            print("| %s | %s | %.2f | %.2f | %.2f | %s |" % (
                size, m, rows[(size, m)]["done"], v[0], v[1],
                "%.2f" % (v[0] / pred["a"][0]) if "a" in pred else "-"))
        others = {m: v[0] for m, v in pred.items() if m not in ("a", "floor")}
        if "a" in pred and others:
            best = min(others, key=others.get)
            print("GOAL size=%s a=%.2f fastest_other=%s %.2f -> %s" % (
                size, pred["a"][0], best, others[best],
                "met (model)" if pred["a"][0] <= others[best] else "NOT met (model)"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--python", help="the interpreter with torch (the e2e benchmark's)")
    ap.add_argument("--e2e", help="an e2e raw file (bench/results/e2e-*.txt) to apply the model to")
    ap.add_argument("--from", dest="src", help="a raw file of this script: no new measurement")
    ap.add_argument("--ps", default="1,2,4,8,16")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--cores", type=int, default=os.cpu_count())
    a = ap.parse_args()
    if a.src:
        model(read_imports(a.src), a.e2e, a.cores)
        return 0
    if not a.python:
        ap.error("--python (or --from)")
    subprocess.run(["bash", os.path.join(ROOT, "bench/lib/raw_header.sh"),
                    "python3 bench/e2e/contention_model.py " + " ".join(sys.argv[1:])], check=True)
    sys.stdout.flush()
    print("# %d cores; children: %s -c \"%s\"" % (os.cpu_count(), a.python, CHILD), flush=True)
    rows = measure(a.python, [int(x) for x in a.ps.split(",")], a.reps)
    model(rows, a.e2e, a.cores)
    return 0


if __name__ == "__main__":
    sys.exit(main())
