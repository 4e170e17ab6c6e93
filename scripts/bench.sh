#!/usr/bin/env bash
# `make bench`: runs every benchmark once and prints the figures that docs/BENCHMARKS.md reports
# (medians of repetitions; the ratios are computed from the same run).
set -uo pipefail
BUILD=${1:-build}
cd "$(dirname "$0")/.."
rc=0
for exe in $(find "$BUILD/bench" -maxdepth 3 -type f -perm -u+x -name '*_bench' | sort); do
  echo "== $exe"
  "$exe" --benchmark_repetitions=10 --benchmark_report_aggregates_only=true || rc=1
done
# bench/sim/sweep/run.sh: the randomized sweep, both seeds, <= 6 min on 2 cores
# (docs/benchmarks/sweep.md).
for script in bench/*/run.sh bench/sim/sweep/run.sh; do
  [ -f "$script" ] || continue
  # The host benchmark needs root and runs on the kernel for minutes: `sudo make bench-host`.
  [ "$script" = bench/host/run.sh ] && continue
  echo "== $script"
  bash "$script" "$BUILD" || rc=1
done
exit $rc
