#!/usr/bin/env bash
# The randomized sweep's pipeline end to end (bench/sim/sweep: gen.py -> dimctl sim -> report.py)
# on a few short workloads, sent elsewhere as a held-out run is (SWEEP_OUT, SWEEP_MARKDOWN,
# SWEEP_FIGURES): every workload simulated under every policy, a report with its section and
# figures, the same report from a second run (the sweep is deterministic), the repository's
# docs untouched, and a missing dimctl refused by name.
# Usage: sweep_pipeline_test.sh REPO_ROOT DIMCTL_BINARY. Exit 77: python3 or gnuplot missing.
set -euo pipefail
REPO=$1
DIMCTL=$2
for tool in python3 gnuplot sha256sum; do
  if ! command -v "$tool" >/dev/null; then
    echo "SKIP: $tool not found (scripts/deps.sh installs it)"
    exit 77
  fi
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

docs_sum() { cat "$REPO/docs/BENCHMARKS.md" "$REPO"/docs/sim/sweep-* | sha256sum; }
before=$(docs_sum)

sweep() {  # sweep NAME: seed 9, 4 workloads of 60 ms, into $tmp/NAME
  SWEEP_SEEDS=9 SWEEP_COUNT=4 SWEEP_DURATION=0.06 SIM_JOBS=2 SWEEP_DIMCTL="$DIMCTL" \
    SWEEP_OUT="$tmp/$1/out" SWEEP_MARKDOWN="$tmp/$1/report.md" SWEEP_FIGURES="$tmp/$1/fig" \
    "$REPO/bench/sim/sweep/run.sh" >"$tmp/$1.log" 2>&1 || {
    cat "$tmp/$1.log" >&2
    fail "run.sh exited non-zero"
  }
}
sweep a

n_yaml=$(find "$tmp/a/out/seed-9" -name 'sweep-9-*.yaml' | wc -l)
[ "$n_yaml" -eq 4 ] || fail "expected 4 workload files, found $n_yaml"
for f in "$tmp"/a/out/seed-9/sweep-9-*.yaml; do
  j=${f%.yaml}.json
  [ -s "$j" ] || fail "no JSON beside $f"
  python3 - "$j" <<'EOF' || fail "$j: not every policy ran"
import json, sys
doc = json.load(open(sys.argv[1]))
got = {r["policy"] for r in doc["runs"]}
want = {"none", "dimctl-model", "dimctl-model-host", "oracle", "oracle@20ms"}
missing = want - got
kernel = [p for p in got if p.startswith("kernel-")]
dimctl = [p for p in got if p.startswith("dimctl-") and p not in want]
if missing or len(kernel) != 1 or len(dimctl) != 1:
    print(f"runs {sorted(got)}: missing {sorted(missing)}", file=sys.stderr)
    sys.exit(1)
for r in doc["runs"]:
    if r["total"]["completions"] <= 0:
        print(f"{r['policy']}: no completions", file=sys.stderr)
        sys.exit(1)
EOF
done

# The efficiency rule's runs: every static profile of the table and the model at a 50us budget.
for f in "$tmp"/a/out/seed-9/sweep-9-*.yaml; do
  j=${f%.yaml}.eff.json
  [ -s "$j" ] || fail "no efficiency JSON beside $f"
  python3 - "$j" "$(sed -n 's/^table: *//p' "$f")" <<'EOF' || fail "$j: not every static profile ran"
import json, sys
doc = json.load(open(sys.argv[1]))
got = [r["policy"] for r in doc["runs"]]
want = [f"static:{i}" for i in range(9 if sys.argv[2] == "rdma" else 5)] + ["dimctl-model-eff:50us"]
if got != want:
    print(f"runs {got}, want {want}", file=sys.stderr)
    sys.exit(1)
EOF
done

report=$tmp/a/report.md
grep -q '^<!-- sweep:begin -->$' "$report" || fail "report has no begin marker"
grep -q '^<!-- sweep:end -->$' "$report" || fail "report has no end marker"
grep -q '^### Seed 9: 4 workloads, 0.06 s simulated each$' "$report" || fail "no seed 9 section"
grep -q '^| \*\*dimctl-model\*\* (default config) | ' "$report" || fail "no dimctl-model row"
[ -s "$tmp/a/fig/sweep-seed9.svg" ] || fail "no scatter plot"
[ -s "$tmp/a/fig/sweep-seed9.md" ] || fail "no detail page"
grep -q '^<!-- sweep-efficiency:begin -->$' "$report" || fail "no efficiency section"
grep -q '^| \*\*dimctl-model-eff:50us\*\* | ' "$report" || fail "no dimctl-model-eff row"
[ -s "$tmp/a/fig/sweep-eff-seed9.md" ] || fail "no efficiency detail page"

# Deterministic: the same commit and seed give the same report.
sweep b
cmp -s "$report" "$tmp/b/report.md" || {
  diff "$report" "$tmp/b/report.md" >&2 || true
  fail "two runs of the same seed gave different reports"
}

[ "$(docs_sum)" = "$before" ] || fail "a run sent elsewhere changed docs/BENCHMARKS.md or docs/sim"

# A dimctl that is not there is named, and nothing runs.
if SWEEP_DIMCTL="$tmp/no-such-dimctl" SWEEP_OUT="$tmp/c" SWEEP_MARKDOWN="$tmp/c.md" \
  SWEEP_FIGURES="$tmp/c" "$REPO/bench/sim/sweep/run.sh" >"$tmp/c.log" 2>&1; then
  fail "run.sh accepted a missing dimctl"
fi
grep -q "no-such-dimctl is not built" "$tmp/c.log" || fail "the error does not name the binary"
[ ! -e "$tmp/c.md" ] || fail "a refused run wrote a report"
echo "PASS: sweep pipeline (4 workloads x 7 policies and the efficiency rule's runs, deterministic, docs untouched)"
