#!/usr/bin/env python3
"""95 % bootstrap interval of median(srun --ddp) / median(plain srun) per N (issue 6: is the
launch overhead under 2 %?). A ratio of two medians of ~100 noisy launches scatters by several
per cent from run to run; the interval says what a run can and cannot resolve.

    python3 bench/ratio_ci.py RAW      # RAW: "N plain|ddp SECONDS" lines from plugin_overhead.sh

Pairs (the i-th plain and i-th --ddp launch, run back to back) are resampled together, so slow
drift of the machine hits both sides of a resample alike. No dependencies; fixed seed.
"""
import random
import statistics
import sys
from collections import defaultdict


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    samples = defaultdict(lambda: {"plain": [], "ddp": []})
    for line in open(sys.argv[1]):
        n, kind, seconds = line.split()
        samples[int(n)][kind].append(float(seconds))
    rng = random.Random(1)
    print("%-4s %5s %12s %22s %22s" % ("N", "pairs", "median ratio", "95% interval (2000x)",
                                       "median paired diff"))
    for n in sorted(samples):
        plain, ddp = samples[n]["plain"], samples[n]["ddp"]
        m = min(len(plain), len(ddp))
        plain, ddp = plain[:m], ddp[:m]
        ratio = statistics.median(ddp) / statistics.median(plain)
        boot = []
        for _ in range(2000):
            idx = [rng.randrange(m) for _ in range(m)]
            boot.append(statistics.median([ddp[i] for i in idx]) /
                        statistics.median([plain[i] for i in idx]))
        boot.sort()
        diff_ms = statistics.median([ddp[i] - plain[i] for i in range(m)]) * 1000
        print("%-4d %5d %12.3f %12.3f - %-7.3f %+19.1f ms" % (n, m, ratio, boot[50], boot[1949],
                                                          diff_ms))


if __name__ == "__main__":
    main()
