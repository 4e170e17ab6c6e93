#!/bin/bash
# Runs two (or more) controller_bench binaries alternately and reports, per benchmark row and
# binary, the median and minimum CPU time per iteration. On a shared VM whose speed drifts by
# 20-30 % within minutes, interleaving is what makes a before/after comparison fair.
#
#   bench/controller/interleave.sh [-r ROUNDS] [-f FILTER] BIN [BIN ...]
#
# Each round runs every binary for 5 repetitions; the default is 6 rounds (30 per row).
set -euo pipefail
rounds=6
filter='BM_'
while getopts "r:f:" opt; do
  case $opt in
    r) rounds=$OPTARG ;;
    f) filter=$OPTARG ;;
    *) echo "usage: $0 [-r ROUNDS] [-f FILTER] BIN [BIN ...]" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
if [ $# -lt 1 ]; then
  echo "usage: $0 [-r ROUNDS] [-f FILTER] BIN [BIN ...]" >&2
  exit 2
fi
for b in "$@"; do
  [ -x "$b" ] || { echo "$0: $b: not an executable" >&2; exit 2; }
done
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for ((round = 1; round <= rounds; round++)); do
  for b in "$@"; do
    "$b" --benchmark_filter="$filter" --benchmark_repetitions=5 --benchmark_min_time=0.1 \
      --benchmark_format=csv 2>/dev/null |
      grep '^"BM' | grep -v '_mean"\|_median"\|_stddev"\|_cv"' |
      awk -F, -v b="$b" '{print b, $1, $4}' >>"$out"
  done
done
python3 - "$out" <<'PY'
import collections, statistics, sys
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    binary, name, cpu = line.split()
    rows[(name.strip('"'), binary)].append(float(cpu))
for (name, binary), v in sorted(rows.items()):
    print(f"{name:62s} {binary:40s} median {statistics.median(v):8.1f}  min {min(v):8.1f}  n={len(v)}")
PY
