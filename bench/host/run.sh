#!/usr/bin/env bash
# bench/host/run.sh BUILD (`make bench-host`, root): every moderation policy measured on this
# host's kernel. Two network namespaces joined by a veth pair (dhb-a, dhb-b; names unique to
# this benchmark, never eth0), software moderation on the receiver's NAPI, Debian's sockperf;
# bench/host/run.py runs the policies interleaved and repeated, then `dimctl sim` runs the same
# shapes (bench/sim/workloads/h*-napi-*.yaml) and bench/host/report.py writes the tables into
# docs/BENCHMARKS.md between <!-- host:begin --> and <!-- host:end --> and the figures into
# docs/host/. Everything the run creates is removed at exit, the NAPI's values restored.
#
# About 8 minutes with the defaults (6 policies x 3 repetitions x 6 sockperf runs of 2 s, each
# ~4.2 s with sockperf's warm-up and wind-down). Longer and steadier:
#   HOST_REPEATS=9 HOST_SECONDS=5 sudo make bench-host        (~50 min)
# HOST_RATES (default 2000,5000,10000,20000) and HOST_POLICIES (default
# none,static:1,static:2,static:3,dimctl-net-eqe,dimctl-model) change what runs; HOST_OUT keeps
# the JSON elsewhere (default BUILD/bench-host/host.json); HOST_DIMCTL runs the daemon policies
# with another dimctl binary (default BUILD's).
set -euo pipefail
BUILD=${1:-build}
cd "$(dirname "$0")/../.."
if [ "$(id -u)" -ne 0 ]; then
  echo "bench/host/run.sh: needs root (network namespaces, napi-set, BPF): sudo make bench-host" >&2
  exit 1
fi
for tool in python3 sockperf ip ethtool taskset chrt; do
  if ! command -v $tool >/dev/null; then
    echo "bench/host/run.sh: $tool not found (scripts/deps.sh installs it)" >&2
    exit 1
  fi
done
DIMCTL=$BUILD/userspace/cli/dimctl
for bin in "$DIMCTL" "$BUILD/bench/host/dimctl_bench_napi_set" "$BUILD/bench/host/dimctl_bench_cpu_probe"; do
  if [ ! -x "$bin" ]; then
    echo "bench/host/run.sh: $bin is not built (cmake --build $BUILD)" >&2
    exit 1
  fi
done
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf 2>/dev/null || true
OUT=$BUILD/bench-host
mkdir -p "$OUT/sim"
JSON=${HOST_OUT:-$OUT/host.json}
POLICIES=${HOST_POLICIES:-none,static:1,static:2,static:3,dimctl-net-eqe,dimctl-model}

commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ "$commit" != unknown ] && ! git diff --quiet HEAD -- . ':(exclude)docs' 2>/dev/null; then
  commit="$commit-dirty"
fi

python3 bench/host/run.py --build "$BUILD" --out "$JSON" --repeats "${HOST_REPEATS:-3}" \
  --seconds "${HOST_SECONDS:-2}" --rates "${HOST_RATES:-2000,5000,10000,20000}" \
  --policies "$POLICIES" ${HOST_DIMCTL:+--dimctl "$HOST_DIMCTL"}

# The same shapes in the simulator (deterministic, seconds), with the policies the host ran.
for w in h1-napi-pingpong h2-napi-rates h3-napi-flood; do
  "$DIMCTL" sim --workload "bench/sim/workloads/$w.yaml" --policy "$POLICIES" --json \
    >"$OUT/sim/$w.json"
done
python3 bench/host/report.py --runs "$JSON" --sim-dir "$OUT/sim" --commit "$commit" \
  --markdown docs/BENCHMARKS.md --figures docs/host
