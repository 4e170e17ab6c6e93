#!/usr/bin/env bash
# bench/sim/run.sh BUILD: the simulator report. Runs `dimctl sim --json --timeline` on every
# workload in bench/sim/workloads/ (plus the W1 sweeps and W2 on eight queues, listed below) with
# the policies of the workload's profile table, and `dimctl sim --trace` on every recorded trace
# in tests/fixtures/traces/, then bench/sim/report.py, which writes the report
# docs/sim/report.md (between <!-- sim:begin --> and <!-- sim:end -->), every metric of every run
# into docs/sim/full-report.md, and draws the SVG figures into docs/sim/ with gnuplot. Both pages
# start with the commit (`git rev-parse --short HEAD`, "-dirty" when the sources differ from it),
# the date and the command.
#
# The simulation is deterministic: a commit and its seeds give the same numbers on any machine;
# only the wall time depends on the machine. SIM_JOBS (default: nproc) runs that many at once.
# SIM_DIMCTL runs another dimctl binary (default BUILD/userspace/cli/dimctl), SIM_OUT keeps the
# runs' JSON elsewhere (default BUILD/bench-sim), SIM_MARKDOWN (default docs/sim/report.md) and
# SIM_FIGURES (default docs/sim) send the report elsewhere.
set -euo pipefail
BUILD=${1:-build}
cd "$(dirname "$0")/../.."
DIMCTL=${SIM_DIMCTL:-$BUILD/userspace/cli/dimctl}
if [ ! -x "$DIMCTL" ]; then
  echo "bench/sim/run.sh: $DIMCTL is not built (cmake --build $BUILD --target dimctl)" >&2
  exit 1
fi
for tool in python3 gnuplot; do
  if ! command -v $tool >/dev/null; then
    echo "bench/sim/run.sh: $tool not found (scripts/deps.sh installs it)" >&2
    exit 1
  fi
done
OUT=${SIM_OUT:-$BUILD/bench-sim}
MARKDOWN=${SIM_MARKDOWN:-docs/sim/report.md}
FIGURES=${SIM_FIGURES:-docs/sim}
rm -rf "$OUT"
mkdir -p "$OUT"
JOBS=${SIM_JOBS:-$(nproc)}
WL=bench/sim/workloads

# The commit the numbers belong to; "-dirty" when the sources differ from it (docs/ excluded:
# this script rewrites docs/sim/ itself).
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ "$commit" != unknown ] && ! git diff --quiet HEAD -- . ':(exclude)docs' 2>/dev/null; then
  commit="$commit-dirty"
fi

# `dimctl-model` (the model-based policy in the daemon's default config: model.costs measured,
# the estimator on the CPU times the simulator reports, its default costs until it is confident)
# runs where this dimctl knows it, and `dimctl-model-host` (the same told the workload's costs
# and timer, explicit values the measurement does not replace) beside it.
model=""
if "$DIMCTL" sim --workload "$WL/w1-qd1.yaml" --policy dimctl-model --dry-run >/dev/null 2>&1; then
  model=",dimctl-model"
fi
if "$DIMCTL" sim --workload "$WL/w1-qd1.yaml" --policy dimctl-model-host --dry-run >/dev/null 2>&1; then
  model="$model,dimctl-model-host"
fi

# The efficiency family (e*-*.yaml): the model under the efficiency objective at three latency
# budgets (`dimctl-model-eff:B`, model.objective: efficiency), where this dimctl knows it.
efficiency=""
if "$DIMCTL" sim --workload "$WL/w1-qd1.yaml" --policy dimctl-model-eff:50us --dry-run >/dev/null 2>&1; then
  efficiency=",dimctl-model-eff:25us,dimctl-model-eff:50us,dimctl-model-eff:100us"
fi

# Policies per profile table: none, a moderate and an aggressive static profile
# (performance-research 6.1 P1/P2), the kernel's DIM, dimctl's controller (20 ms period),
# the model-based policy when present, and the oracle (best static profile per phase).
policies() {
  case "$1" in
    # The host benchmark's shapes (software moderation): every static profile it measures.
    net-eqe-host) echo "none,static:1,static:2,static:3,kernel-net-eqe,dimctl-net-eqe$model,oracle" ;;
    # The efficiency family: every static profile (the fixed choices a budget is judged
    # against), the adaptive policies, and the efficiency objective beside the latency one.
    rdma-eff) echo "none,static:0,static:1,static:2,static:3,static:4,static:5,static:6,static:7,static:8,kernel-rdma,dimctl-rdma$model$efficiency,oracle" ;;
    net-eqe-eff) echo "none,static:0,static:1,static:2,static:3,static:4,kernel-net-eqe,dimctl-net-eqe$model$efficiency,oracle" ;;
    net-cqe-eff) echo "none,static:0,static:1,static:2,static:3,static:4,kernel-net-cqe,dimctl-net-cqe$model$efficiency,oracle" ;;
    rdma) echo "none,static:6,static:8,kernel-rdma,dimctl-rdma$model,oracle" ;;
    net-eqe) echo "none,static:1,static:2,kernel-net-eqe,dimctl-net-eqe$model,oracle" ;;
    net-cqe) echo "none,static:1,static:3,kernel-net-cqe,dimctl-net-cqe$model,oracle" ;;
    *) echo "bench/sim/run.sh: unknown table '$1'" >&2; exit 1 ;;
  esac
}

# id|workload file|extra flags. An id is FILE-STEM[@variant]; the report groups by stem.
runs=()
for f in "$WL"/*.yaml; do
  runs+=("$(basename "$f" .yaml)|$f|")
done
# W1 sweeps around w1-qd1 (service log-normal 5us cv 0.3, idle-gap timer, cost 4k), each long
# enough for >= 10^6 completions (p99.99 significant).
runs+=("w1-qd1@service-1us|$WL/w1-qd1.yaml|--service lognormal:1us:0.3 --duration 10s")
runs+=("w1-qd1@service-20us|$WL/w1-qd1.yaml|--service lognormal:20us:0.3 --duration 35s")
runs+=("w1-qd1@service-80us|$WL/w1-qd1.yaml|--service lognormal:80us:0.3 --duration 110s")
runs+=("w1-qd1@timer-rate-limit|$WL/w1-qd1.yaml|--timer rate-limit --duration 15s")
runs+=("w1-qd1@timer-absolute|$WL/w1-qd1.yaml|--timer absolute --duration 15s")
runs+=("w1-qd1@cost-512B|$WL/w1-qd1.yaml|--cost 512B --duration 15s")
runs+=("w1-qd1@cost-64k|$WL/w1-qd1.yaml|--cost 64k --duration 15s")
# W2 multi-queue: eight queues sharing the one core.
runs+=("w2-closed@8q|$WL/w2-closed.yaml|--queues 8")
# W3 with one queue per core (2 queues on the 2 cores, QD 32 each), 2 s: each queue's counters
# then carry its core's whole load, which a per-queue policy (the model) needs to see.
runs+=("w3-sat-4k@1q-per-core|$WL/w3-sat-4k.yaml|--queues 2 --duration 2s")
runs+=("w3-sat-512B@1q-per-core|$WL/w3-sat-512B.yaml|--queues 2 --duration 2s")

manifest=$OUT/manifest.tsv
: >"$manifest"
for r in "${runs[@]}"; do
  IFS='|' read -r id file flags <<<"$r"
  table=$(sed -n 's/^table: *\([a-z-]*\).*/\1/p' "$file")
  case "$id" in
    h*-napi-*) table=net-eqe-host ;;
    e[0-9]*-*) table=${table:-rdma}-eff ;;
  esac
  cmd="dimctl sim --workload $file --policy $(policies "${table:-rdma}") --json --timeline${flags:+ $flags}"
  printf '%s\t%s\n' "$id" "$cmd" >>"$manifest"
done
# Recorded veth traces (`dimctl record`, tests/fixtures/traces/): replayed on a net-eqe RX queue
# under both static profiles of that table, kernel net DIM in EQE and CQE mode, the daemon's DIM,
# the model policy and the oracle. Id: trace-FILE-STEM.
# A trace recorded with CPU times (format 2) is replayed a second time at the recording host's
# own costs, measured from it (`--cost trace`; docs/TRACE.md): id trace-FILE-STEM-host-costs.
trace_policies="none,static:1,static:2,kernel-net-eqe,kernel-net-cqe,dimctl-net-eqe$model,oracle"
for f in tests/fixtures/traces/*.dtr; do
  [ -e "$f" ] || continue
  printf '%s\t%s\n' "trace-$(basename "$f" .dtr)" \
    "dimctl sim --trace $f --policy $trace_policies --json --timeline" >>"$manifest"
  if "$DIMCTL" trace costs --json "$f" >/dev/null 2>&1; then
    printf '%s\t%s\n' "trace-$(basename "$f" .dtr)-host-costs" \
      "dimctl sim --trace $f --cost trace --policy $trace_policies --json --timeline" >>"$manifest"
  fi
done

one() {  # one run: $1 = id, $2 = the dimctl sim command line (dimctl = $DIMCTL)
  local id=$1 cmd=$2 t0 ms rc=0
  t0=$(date +%s%N)
  # shellcheck disable=SC2086 # the command line is a list of words
  "$DIMCTL" ${cmd#dimctl } >"$OUT/$id.json" 2>"$OUT/$id.err" || rc=$?
  ms=$((($(date +%s%N) - t0) / 1000000))
  printf '%-28s %4d.%01ds%s\n' "$id" $((ms / 1000)) $((ms % 1000 / 100)) \
    "$([ $rc -eq 0 ] || echo "  FAILED (rc $rc): $(head -c 300 "$OUT/$id.err")")"
  return $rc
}
export -f one
export DIMCTL OUT

echo "bench/sim: $(wc -l <"$manifest") runs, $JOBS at a time, commit $commit"
t0=$(date +%s)
rc=0
# shellcheck disable=SC2016 # $0 and $1 are the inner shell's
tr '\t' '\n' <"$manifest" | xargs -d '\n' -n 2 -P "$JOBS" bash -c 'one "$0" "$1"' || rc=1
echo "bench/sim: simulations took $(($(date +%s) - t0))s"
if [ $rc -ne 0 ]; then
  echo "bench/sim/run.sh: some runs failed (see $OUT/*.err)" >&2
  exit 1
fi
python3 bench/sim/report.py --runs "$OUT" --commit "$commit" --markdown "$MARKDOWN" \
  --figures "$FIGURES"
