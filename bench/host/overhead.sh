#!/usr/bin/env bash
# bench/host/overhead.sh BUILD (`make bench-overhead`, root): what dimctl costs a busy host.
# bench/host/overhead.py runs a UDP flood, a QD=1 ping-pong and a paced rate over bench/host's
# veth pair (namespaces dhb-a/dhb-b, never eth0) in each state (nothing attached, the BPF
# programs alone, a process that only wakes, the daemon in observe, shadow and enforce),
# interleaved in a random order per repetition, then the daemon at rest with 0-100 veth NAPIs;
# the report goes into docs/benchmarks/overhead.md between <!-- overhead:begin --> and
# <!-- overhead:end -->. Everything it creates is removed at exit.
#
# About 20 minutes with the defaults (8 states x 7 repetitions x 3 runs of 2 s, each ~4.3 s with
# sockperf's warm-up and wind-down; the rest rows 4 x 13 s). OVERHEAD_REPEATS, OVERHEAD_SECONDS,
# OVERHEAD_STATES (comma-separated), OVERHEAD_RATE (paced, default 20000), OVERHEAD_SEED,
# OVERHEAD_DEVICES (rest, default 0,10,50,100) change it; OVERHEAD_OUT keeps the JSON elsewhere
# (default BUILD/bench-overhead/); OVERHEAD_MARKDOWN=- prints the report instead of writing it.
set -euo pipefail
BUILD=${1:-build}
cd "$(dirname "$0")/../.."
if [ "$(id -u)" -ne 0 ]; then
  echo "bench/host/overhead.sh: needs root (network namespaces, BPF): sudo make bench-overhead" >&2
  exit 1
fi
for tool in python3 sockperf ip ethtool taskset chrt bpftool curl; do
  if ! command -v $tool >/dev/null; then
    echo "bench/host/overhead.sh: $tool not found (scripts/deps.sh installs it)" >&2
    exit 1
  fi
done
for bin in userspace/cli/dimctl bench/host/dimctl_bench_cpu_probe bench/host/dimctl_bench_attach_probe; do
  if [ ! -x "$BUILD/$bin" ]; then
    echo "bench/host/overhead.sh: $BUILD/$bin is not built (cmake --build $BUILD)" >&2
    exit 1
  fi
done
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf 2>/dev/null || true
OUT=${OVERHEAD_OUT:-$BUILD/bench-overhead}
mkdir -p "$OUT"
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ "$commit" != unknown ] && ! git diff --quiet HEAD -- . ':(exclude)docs' 2>/dev/null; then
  commit="$commit-dirty"
fi
python3 bench/host/overhead.py run --build "$BUILD" --out "$OUT/states.json" \
  --repeats "${OVERHEAD_REPEATS:-7}" --seconds "${OVERHEAD_SECONDS:-2}" \
  --rate "${OVERHEAD_RATE:-20000}" --seed "${OVERHEAD_SEED:-1}" \
  ${OVERHEAD_STATES:+--states "$OVERHEAD_STATES"}
python3 bench/host/overhead.py rest --build "$BUILD" --out "$OUT/rest.json" \
  --devices "${OVERHEAD_DEVICES:-0,10,50,100}"
if [ "${OVERHEAD_MARKDOWN:-}" = - ]; then
  python3 bench/host/overhead.py report --runs "$OUT/states.json" --rest "$OUT/rest.json" \
    --commit "$commit"
else
  python3 bench/host/overhead.py report --runs "$OUT/states.json" --rest "$OUT/rest.json" \
    --commit "$commit" --markdown "${OVERHEAD_MARKDOWN:-docs/benchmarks/overhead.md}"
fi
