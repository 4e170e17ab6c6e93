#!/usr/bin/env python3
"""Paired timing of two or more controller_bench (or any Google Benchmark) binaries.

    bench/controller/paired.py [-n PAIRS] [-f FILTER] BASE NEW [MORE ...]

This VM drifts between fast and slow phases (the same binary reads 30-50 % apart minutes
apart), so per-binary medians over a run depend on which phase each binary happened to meet.
Here every binary runs one short repetition in turn (the order rotating each round), and each
repetition is compared with BASE's repetition of the same round: the median of those ratios is
the figure to trust; the medians and minima per binary are printed beside it.
"""
import argparse
import collections
import csv
import io
import statistics
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", type=int, default=30, help="rounds (default 30)")
    ap.add_argument("-f", default="BM_", help="--benchmark_filter (default BM_)")
    ap.add_argument("--min-time", default="0.05", help="--benchmark_min_time per repetition")
    ap.add_argument("bins", nargs="+", help="BASE first, then the binaries to compare")
    a = ap.parse_args()
    if a.n < 1:
        ap.error("-n must be at least 1")
    # rows[name][binary] = CPU time per iteration, one entry per round
    rows = collections.defaultdict(lambda: collections.defaultdict(list))
    for r in range(a.n):
        order = a.bins[r % len(a.bins):] + a.bins[:r % len(a.bins)]
        for b in order:
            out = subprocess.run(
                [b, f"--benchmark_filter={a.f}", f"--benchmark_min_time={a.min_time}",
                 "--benchmark_format=csv"], capture_output=True, text=True)
            if out.returncode != 0:
                sys.exit(f"{b}: exit {out.returncode}: {out.stderr.strip()[:200]}")
            for row in csv.reader(io.StringIO(out.stdout)):
                if row and row[0].startswith("BM_"):
                    rows[row[0]][b].append(float(row[3]))
    if not rows:
        sys.exit(f"no benchmark matched {a.f!r}")
    base = a.bins[0]
    for name, per in sorted(rows.items()):
        for b in a.bins:
            v = per[b]
            ratio = statistics.median(x / y for x, y in zip(v, per[base]))
            print(f"{name:64} {b:40} median {statistics.median(v):8.1f}  min {min(v):8.1f}"
                  f"  n={len(v)}  paired ratio to base (median) {ratio:.3f}")


if __name__ == "__main__":
    main()
