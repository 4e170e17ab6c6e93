#!/usr/bin/env bash
# bench/sim/sweep/run.sh BUILD: the randomized sweep (docs/benchmarks/sweep.md).
# For each seed in SWEEP_SEEDS (default "1 2"), gen.py draws SWEEP_COUNT (default 300) workloads
# of SWEEP_DURATION simulated seconds each (default 0.5), and `dimctl sim --json` runs each under
# none, kernel DIM, dimctl DIM (the workload's table), dimctl-model (the default config),
# dimctl-model-host (told the workload's costs), the oracle and the oracle's choices one control
# period late (oracle@20ms: what a policy that chose as well could reach by reacting once a
# period; it reuses the oracle's schedule, one run more). report.py then writes the
# section between <!-- sweep:begin --> and <!-- sweep:end --> of docs/BENCHMARKS.md and the
# scatter plots docs/sim/sweep-seed*.svg, and docs/sim/sweep-seed*.md (every workload the model
# misses). Each names the commit (`git rev-parse --short HEAD`, "-dirty" when the sources differ
# from it) and its date (today's, UTC, for a dirty tree).
#
# Held-out seeds: seeds 1 and 2 are the ones the model was tuned on; another pair checks what
# that tuning learned in general (docs/benchmarks/sweep.md, "Held-out seeds"). SWEEP_OUT
# (default BUILD/bench-sweep), SWEEP_MARKDOWN (default docs/BENCHMARKS.md, created when missing)
# and SWEEP_FIGURES (default docs/sim) send such a run elsewhere, leaving the docs as they are;
# SWEEP_DIMCTL runs another dimctl binary (default BUILD/userspace/cli/dimctl).
#
# Two rules (SWEEP_RULES, default "oracle efficiency"): `oracle`, the runs above; `efficiency`,
# per workload every static profile of its table and dimctl-model-eff:50us (the model under
# `model.objective: efficiency`, `model.latency_budget: 50us`) into NAME.eff.json, judged against
# the cheapest static profile within the budget (report.py; its section of docs/BENCHMARKS.md
# lies between <!-- sweep-efficiency:begin --> and <!-- sweep-efficiency:end -->, its misses in
# docs/sim/sweep-eff-seed*.md). A run of one rule rewrites that rule's section only.
#
# Time budget: both seeds, 600 workloads in all, in <= 6 min on 2 free cores (about 3.5 min of
# CPU at the defaults, docs/benchmarks/sweep.md "Time"); the durations are short, the counts
# are not. Deterministic: a commit and its seeds give the same figures on any machine.
set -euo pipefail
BUILD=${1:-build}
cd "$(dirname "$0")/../../.."
DIMCTL=${SWEEP_DIMCTL:-$BUILD/userspace/cli/dimctl}
if [ ! -x "$DIMCTL" ]; then
  echo "bench/sim/sweep/run.sh: $DIMCTL is not built (cmake --build $BUILD --target dimctl)" >&2
  exit 1
fi
for tool in python3 gnuplot; do
  if ! command -v $tool >/dev/null; then
    echo "bench/sim/sweep/run.sh: $tool not found (scripts/deps.sh installs it)" >&2
    exit 1
  fi
done
SEEDS=${SWEEP_SEEDS:-1 2}
COUNT=${SWEEP_COUNT:-300}
DURATION=${SWEEP_DURATION:-0.5}
JOBS=${SIM_JOBS:-$(nproc)}
OUT=${SWEEP_OUT:-$BUILD/bench-sweep}
MARKDOWN=${SWEEP_MARKDOWN:-docs/BENCHMARKS.md}
FIGURES=${SWEEP_FIGURES:-docs/sim}
# Which rules to run: `oracle` (every policy against the oracle) and `efficiency` (the model
# under the efficiency objective at a 50us budget against every static profile).
RULES=${SWEEP_RULES:-oracle efficiency}
BUDGET=50us  # the efficiency rule's latency budget (report.py EFF_BUDGET_NS)
for r in $RULES; do
  case "$r" in
    oracle | efficiency) ;;
    *) echo "bench/sim/sweep/run.sh: SWEEP_RULES: unknown rule '$r' (oracle, efficiency)" >&2; exit 2 ;;
  esac
done
rm -rf "$OUT"
mkdir -p "$OUT"

commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ "$commit" != unknown ] && ! git diff --quiet HEAD -- . ':(exclude)docs' 2>/dev/null; then
  commit="$commit-dirty"
fi
case "$commit" in
  unknown | *-dirty) date=$(date -u +%Y-%m-%d) ;;
  *) date=$(git log -1 --format=%cd --date=format:%Y-%m-%d) ;;
esac

one() {  # one workload file: every policy of its table, JSON beside it
  local f=$1 table kernel dimctl statics="" i n=5 reference=""
  table=$(sed -n 's/^table: *\([a-z-]*\).*/\1/p' "$f")
  kernel=kernel-$table
  dimctl=dimctl-$table
  if [[ " $RULES " == *" oracle "* ]]; then
    "$DIMCTL" sim --workload "$f" --json \
      --policy "none,$kernel,$dimctl,dimctl-model,dimctl-model-host,oracle,oracle@20ms" \
      >"${f%.yaml}.json" 2>"${f%.yaml}.err" || {
      echo "bench/sim/sweep: $f FAILED: $(head -c 300 "${f%.yaml}.err")" >&2
      return 1
    }
  else
    reference="none,dimctl-model,"  # the efficiency rule's reference, else from the run above
  fi
  if [[ " $RULES " == *" efficiency "* ]]; then
    # Every static profile of the table for the whole run, and the model under the efficiency
    # objective at the rule's budget: NAME.eff.json, read with NAME.json.
    [ "$table" = rdma ] && n=9
    for ((i = 0; i < n; i++)); do statics+="static:$i,"; done
    "$DIMCTL" sim --workload "$f" --json --policy "$reference${statics}dimctl-model-eff:$BUDGET" \
      >"${f%.yaml}.eff.json" 2>"${f%.yaml}.eff.err" || {
      echo "bench/sim/sweep: $f FAILED (efficiency): $(head -c 300 "${f%.yaml}.eff.err")" >&2
      return 1
    }
  fi
}
export -f one
export DIMCTL RULES BUDGET

dirs=()
t0=$(date +%s)
for seed in $SEEDS; do
  dir=$OUT/seed-$seed
  python3 bench/sim/sweep/gen.py --seed "$seed" --count "$COUNT" --duration "$DURATION" --out "$dir"
  ts=$(date +%s)
  # shellcheck disable=SC2016 # $0 is the inner shell's
  find "$dir" -name '*.yaml' | sort | xargs -d '\n' -n 1 -P "$JOBS" bash -c 'one "$0"'
  echo "bench/sim/sweep: seed $seed, $COUNT workloads, $JOBS at a time: $(($(date +%s) - ts))s"
  dirs+=("$dir")
done
echo "bench/sim/sweep: all seeds took $(($(date +%s) - t0))s (commit $commit, rules: $RULES)"
python3 bench/sim/sweep/report.py --commit "$commit" --date "$date" --markdown "$MARKDOWN" \
  --figures "$FIGURES" "${dirs[@]}"
