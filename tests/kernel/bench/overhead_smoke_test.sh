#!/usr/bin/env bash
# `make bench-overhead`'s harness (bench/host/overhead.py) end to end on this kernel, shortened:
# the states none and shadow, one repetition of 1 s sockperf runs, then the rest rows with 0 and
# 3 NAPIs, then the report. Checks that every state ran every workload with traffic, that the
# daemon's own CPU and netlink requests were read, that the rest rows saw the NAPIs they made,
# and that the report renders both; the harness must leave no namespace behind.
#   overhead_smoke_test.sh REPO_ROOT BUILD
set -euo pipefail
ROOT=$1
BUILD=$(cd "$2" && pwd)
source "$ROOT/tests/kernel/lib.sh"
skip_unless_root "needs root (network namespaces, BPF)"
for tool in sockperf bpftool curl python3; do
  command -v $tool >/dev/null || skip "$tool not installed (scripts/deps.sh installs it)"
done
kernel_test_start ovh
cd "$ROOT"

if python3 bench/host/overhead.py run --build "$BUILD" --out "$WORK/states.json" --repeats 1 \
  --seconds 1 --states none,shadow >"$WORK/run.log" 2>&1; then
  pass harness_run
else
  FAIL_LOG=$WORK/run.log fail harness_run "overhead.py run exited non-zero"
fi
if python3 bench/host/overhead.py rest --build "$BUILD" --out "$WORK/rest.json" --devices 0,3 \
  --seconds 1 >"$WORK/rest.log" 2>&1; then
  pass harness_rest
else
  FAIL_LOG=$WORK/rest.log fail harness_rest "overhead.py rest exited non-zero"
fi
if ip netns list | grep -qE '^(dhb-a|dhb-b|dho-rest)\b'; then
  fail namespaces_removed "$(ip netns list | grep -E '^(dhb-a|dhb-b|dho-rest)\b' | tr '\n' ' ')"
else
  pass namespaces_removed
fi

cat >"$WORK/check.py" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(eval(sys.argv[2]))
PY
check() {  # check NAME FILE EXPRESSION: EXPRESSION over d (FILE's JSON) must be "OK"
  local out
  out=$(python3 "$WORK/check.py" "$2" "$3" 2>&1) || true
  if [ "$out" = OK ]; then pass "$1"; else fail "$1" "$out"; fi
}
S=$WORK/states.json R=$WORK/rest.json
[ -f "$S" ] && check every_state_ran_every_workload "$S" \
  '"OK" if sorted((r["state"], r["workload"]) for r in d["runs"]) == sorted((s, w) for s in ("none", "shadow") for w in ("flood", "pingpong", "paced")) else [(r["state"], r["workload"]) for r in d["runs"]]'
[ -f "$S" ] && check every_run_carried_traffic "$S" \
  '"OK" if all(r["received"] > 0 for r in d["runs"]) else [(r["state"], r["workload"], r["received"]) for r in d["runs"]]'
[ -f "$S" ] && check latency_read "$S" \
  '"OK" if all(r["percentiles"].get("50.000", 0) > 0 for r in d["runs"] if r["workload"] != "flood") else "no p50"'
[ -f "$S" ] && check net_rx_time_read "$S" \
  '"OK" if all(r.get("net_rx_us_per_msg", 0) > 0 for r in d["runs"]) else "NET_RX time missing"'
[ -f "$S" ] && check daemon_cpu_and_netlink_read "$S" \
  '"OK" if all(r["state_cpu_share"] > 0 and "netdev" in r.get("netlink_per_s", {}) for r in d["runs"] if r["state"] == "shadow") else [(r["workload"], r["state_cpu_share"], r.get("netlink_per_s")) for r in d["runs"] if r["state"] == "shadow"]'
[ -f "$S" ] && check daemon_programs_timed "$S" \
  '"OK" if all(any(k.startswith("dimctl_napi_poll") and not v["meter"] for k, v in r["bpf"].items()) for r in d["runs"] if r["state"] == "shadow" and r["workload"] == "flood") else "no napi_poll run time for shadow"'
[ -f "$R" ] && check rest_rows_saw_their_napis "$R" \
  '"OK" if [(r["devices"], r["napis"]) for r in d["rows"]] == [(0, 0), (3, 3)] and all(r["cpu_ms_per_s"] > 0 for r in d["rows"]) else d["rows"]'
if [ -f "$S" ] && [ -f "$R" ] &&
  python3 bench/host/overhead.py report --runs "$S" --rest "$R" >"$WORK/report.md" 2>&1 &&
  grep -q '^| shadow |' "$WORK/report.md" && grep -q '^| 3 |' "$WORK/report.md"; then
  pass report_renders
else
  FAIL_LOG=$WORK/report.md fail report_renders "no shadow row or rest row"
fi
print_summary
