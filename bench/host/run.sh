#!/usr/bin/env bash
# bench/host/run.sh BUILD (`make bench-host`, root): every moderation policy measured on this
# host's kernel. Two network namespaces joined by a veth pair (dhb-a, dhb-b; names unique to
# this benchmark, never eth0), software moderation on the receiver's NAPI, Debian's sockperf;
# bench/host/run.py runs the policies interleaved and repeated, then `dimctl sim` runs the same
# shapes (bench/sim/workloads/h*-napi-*.yaml) and bench/host/report.py writes the tables into
# docs/BENCHMARKS.md between <!-- host:begin --> and <!-- host:end --> and the figures into
# docs/host/. Everything the run creates is removed at exit, the NAPI's values restored.
#
# About 35 minutes with the defaults (11 policies x 5 repetitions x 7 sockperf runs of 2 s, each
# ~4.2 s with sockperf's warm-up and wind-down, 1.5 s to start each daemon, and HOST_WARMUP (20)
# s of unmeasured 20k/s traffic after each efficiency daemon starts, for its cost probe). Shorter:
#   HOST_REPEATS=3 HOST_POLICIES=none,static-64us,dimctl-model-eff50 sudo make bench-host
# HOST_REPEATS (default 5), HOST_SECONDS (default 2), HOST_RATES (default
# 2000,5000,10000,20000,50000) and HOST_POLICIES (default none,static-16us,static-32us,
# static-64us,static-128us,static-256us,dimctl-net-eqe,dimctl-model,dimctl-model-eff25,
# dimctl-model-eff50,dimctl-model-eff100) change what runs; HOST_OUT keeps the JSON elsewhere
# (default BUILD/bench-host/host.json; the simulator's JSON goes to sim/ beside it);
# HOST_DIMCTL runs the daemon policies with another dimctl binary (default BUILD's);
# HOST_MARKDOWN and HOST_FIGURES send the report elsewhere (default docs/BENCHMARKS.md, docs/host;
# HOST_MARKDOWN= prints it instead).
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
JSON=${HOST_OUT:-$BUILD/bench-host/host.json}
OUT=$(dirname "$JSON")
mkdir -p "$OUT/sim"
POLICIES=${HOST_POLICIES:-none,static-16us,static-32us,static-64us,static-128us,static-256us,dimctl-net-eqe,dimctl-model,dimctl-model-eff25,dimctl-model-eff50,dimctl-model-eff100}
MARKDOWN=${HOST_MARKDOWN-docs/BENCHMARKS.md}
FIGURES=${HOST_FIGURES:-docs/host}

commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ "$commit" != unknown ] && ! git diff --quiet HEAD -- . ':(exclude)docs' 2>/dev/null; then
  commit="$commit-dirty"
fi

python3 bench/host/run.py --build "$BUILD" --out "$JSON" --repeats "${HOST_REPEATS:-5}" \
  --seconds "${HOST_SECONDS:-2}" --warmup "${HOST_WARMUP:-20}" --rates "${HOST_RATES:-2000,5000,10000,20000,50000}" \
  --policies "$POLICIES" ${HOST_DIMCTL:+--dimctl "$HOST_DIMCTL"}

# The same shapes in the simulator (deterministic, seconds), with the host's policies that it
# has (run.py names the others and why); the report maps the names back.
SIM_POLICIES=$(python3 bench/host/run.py --sim-policies "$POLICIES")
rm -f "$OUT"/sim/h*-napi-*.json
if [ -n "$SIM_POLICIES" ]; then
  for w in h1-napi-pingpong h2-napi-rates h3-napi-flood; do
    "$DIMCTL" sim --workload "bench/sim/workloads/$w.yaml" --policy "$SIM_POLICIES" --json \
      >"$OUT/sim/$w.json"
  done
fi
python3 bench/host/report.py --runs "$JSON" --sim-dir "$OUT/sim" --commit "$commit" \
  ${MARKDOWN:+--markdown "$MARKDOWN"} --figures "$FIGURES"
