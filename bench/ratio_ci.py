#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""95 % bootstrap intervals of median ratios between the arms of bench/plugin_overhead.sh, per N
(is the launch overhead under 2 %?). A ratio of two medians of ~100 noisy launches
scatters by several per cent from run to run; the interval says what a run can and cannot resolve.

    python3 bench/ratio_ci.py RAW      # RAW: "N none|plain|ddp SECONDS" lines from plugin_overhead.sh

Arms: `none` (no plugin in plugstack.conf), `plain` (plugin loaded, no --ddp), `ddp`. Ratios
printed for every pair present: plain/none (what installing the plugin costs every step),
ddp/none (a --ddp step against a site without the plugin) and ddp/plain (the cost of --ddp).
Launches of one repetition (the i-th of each arm, run back to back) are resampled together, so
slow drift of the machine hits both sides of a resample alike. No dependencies; fixed seed.
"""
import random
import statistics
import sys
from collections import defaultdict

PAIRS = [("plain", "none"), ("ddp", "none"), ("ddp", "plain")]


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    samples = defaultdict(lambda: defaultdict(list))
    for line in open(sys.argv[1]):
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


if __name__ == "__main__":
    main()
