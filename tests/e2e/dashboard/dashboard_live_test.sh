#!/usr/bin/env bash
# e2e: every query of dashboards/dimctl.json (its panels' targets, its annotation, its query
# variables; dashboard_promql.py substitutes the variables) returns at least one series from a
# real Prometheus server (Debian's) scraping a live `dimctl run` under veth traffic, or is one
# that EXPECTED_EMPTY below lists with the reason.
#
# In a private network namespace (never eth0), as root: a veth pair whose receiver (dimdash0,
# shadow, net DIM) sees bursts of UDP from a second namespace, and a tap (dimdashtap0, enforce,
# static profile) that dimctl writes, so that the apply, coalesce and drift panels have series.
# The daemon and Prometheus (scraping every second) both run in that namespace, on its loopback.
#   usage: dashboard_live_test.sh path/to/dimctl
# Prints one PASS/FAIL line per query and "N passed, N failed". Exit 77 (skip) when not root or
# Prometheus is not installed, except under CI=true where a missing Prometheus fails.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/kernel/lib.sh
source "$HERE/../../kernel/lib.sh"
ROOT=$(cd "$HERE/../../.." && pwd)
DIMCTL=$(readlink -f "${1:?usage: dashboard_live_test.sh path/to/dimctl}")
DASHBOARD=${DASHBOARD:-$ROOT/dashboards/dimctl.json}
TIMEOUT=${DIMCTL_E2E_TIMEOUT:-60}

skip_unless_root "needs root (BPF, network namespaces, ethtool netlink)"
PROMETHEUS=$(command -v prometheus || true)
if [ -z "$PROMETHEUS" ]; then
  [ "${CI:-}" = true ] && { echo "FAIL: prometheus not installed (CI=true: scripts/deps.sh installs it)"; exit 1; }
  echo "SKIP: prometheus not installed (apt-get install prometheus)"
  exit 77
fi
for tool in curl jq python3 ethtool; do
  command -v "$tool" >/dev/null || { echo "FAIL: $tool is required"; exit 1; }
done

NS=dimctl-e2edash-$$
NS2=dimctl-e2edash2-$$
WORK=$(mktemp -d /tmp/dimctl-e2e-dash.XXXXXX)
PORT=9977 PROM=127.0.0.1:9090 # the namespace's own loopback: nothing else listens there
DAEMON_PID="" PROM_PID="" TRAFFIC_PID=""
passed=0 failed=0

cleanup() {
  kill_quiet TERM "$TRAFFIC_PID" "$PROM_PID"
  [ -n "$DAEMON_PID" ] && stop_daemon TERM >/dev/null
  kill_quiet KILL "$TRAFFIC_PID" "$PROM_PID"
  wait 2>/dev/null
  netns_del "$NS" "$NS2"
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

netns_add "$NS" "$NS2"
veth_pair "$NS2" dimdash1 10.213.7.2 "$NS" dimdash0 10.213.7.1
nsx ip tuntap add dev dimdashtap0 mode tap
nsx ethtool -C dimdashtap0 rx-frames 8

cat >"$WORK/dimctl.yaml" <<CFG
version: 1
mode: shadow
interval: 20ms
state_file: $WORK/state.json
metrics:
  listen: 127.0.0.1:$PORT
  publish_interval: 1s
collectors:
  napi: true
  rdma: true
  # veth reports no bytes (no netdev qstats): without the counter DIM's first criterion, the
  # byte rate, is 0 and every decision "same", and the profile never moves.
  skb_bytes: ["dimdash0"]
devices:
  - name: dash-veth
    match:
      interface: ["dimdash0"]
    mode: shadow
    algorithm: net-eqe
  - name: dash-tap
    match:
      interface: ["dimdashtap0"]
    mode: enforce
    algorithm: static:3
    rate_limit: 100ms
CFG
start_daemon
FAIL_LOG=$WORK/daemon.log

cat >"$WORK/prometheus.yml" <<YAML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: dimctl
    scrape_interval: 1s
    scrape_timeout: 1s
    static_configs:
      - targets: ["127.0.0.1:$PORT"]
YAML
ip netns exec "$NS" "$PROMETHEUS" --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/data" \
  --web.listen-address="$PROM" --log.level=warn >"$WORK/prometheus.log" 2>&1 &
PROM_PID=$!

# Bursts and pauses for the whole test (bounded), so DIM sees the load change and moves.
(
  end=$((SECONDS + TIMEOUT + 30))
  while [ "$SECONDS" -lt "$end" ]; do
    udp_burst "$NS2" 10.213.7.1 3000
    sleep 0.5
  done
) &
TRAFFIC_PID=$!

START=$(date +%s) STARTED=$SECONDS
wait_for 20 ready || { fail daemon_ready "dimctl not ready on 127.0.0.1:$PORT"; print_summary; exit 1; }
prom_ready() { [ "$(nsx curl -s -o /dev/null -w '%{http_code}' --max-time 1 "http://$PROM/-/ready")" = 200 ]; }
wait_for 30 prom_ready || { FAIL_LOG=$WORK/prometheus.log fail prometheus_ready "not ready on $PROM"; print_summary; exit 1; }

# series PROMQL: how many series the query returns as a range query over the test so far, as
# Grafana runs a time series panel or an annotation over the dashboard's range (0 when none).
series() {
  local n
  n=$(nsx curl -fsS --max-time 3 -G "http://$PROM/api/v1/query_range" --data-urlencode "query=$1" \
    --data-urlencode "start=$START" --data-urlencode "end=$(date +%s)" --data-urlencode step=1s 2>/dev/null |
    jq -r 'if .status == "success" then (.data.result | length) else 0 end' 2>/dev/null)
  echo "${n:-0}"
}

# Queries that this test cannot fill, by what they query (an extended regex on the expression),
# and why. Such a query that returns series all the same passes and says so.
EXPECTED_EMPTY=(
  'dimctl_rdma_|RDMA CQ series need ib_core and an RDMA device with completions, which this test does not have (the lab tier, tests/lab, runs RDMA DIM under qemu)'
  'dimctl_model_[lp][a-z_]*_seconds|no device of this test runs the cost model (dash-veth runs net DIM, dash-tap a static profile); the controller unit tests check these values'
  'dimctl_coalesce_rx_usecs\{[^}]*source="applied"|no device of this test reports rx-usecs back: veth has no interrupt coalescing and tun/tap only rx-frames (a NIC or netdevsim would)'
)
expected_empty() {  # expected_empty EXPR: prints the reason when EXPR is expected empty
  local e
  for e in "${EXPECTED_EMPTY[@]}"; do
    grep -qE -- "${e%%|*}" <<<"$1" && { echo "${e#*|}"; return 0; }
  done
  return 1
}

# Rates over 10 s: ten scrapes, several of them under traffic. $__interval is Grafana's step.
mapfile -t QUERIES < <(python3 "$ROOT/tests/unit/deploy/dashboard_promql.py" list "$DASHBOARD" \
  --rate-interval 10s --interval 2s --range 1m)
[ "${#QUERIES[@]}" -gt 0 ] || { fail queries "no query extracted from $DASHBOARD"; print_summary; exit 1; }
declare -A got=()
# Every query that should have series polled until it has or TIMEOUT; the expected-empty ones
# are read once the others are done, after at least MIN_WINDOW seconds of traffic.
MIN_WINDOW=20
deadline=$((SECONDS + TIMEOUT))
while :; do
  pending=0
  for q in "${QUERIES[@]}"; do
    expr=$(jq -r .expr <<<"$q")
    [ -n "${got[$expr]:-}" ] && [ "${got[$expr]}" -gt 0 ] && continue
    got[$expr]=$(series "$expr")
    [ "${got[$expr]}" -gt 0 ] || expected_empty "$expr" >/dev/null || pending=$((pending + 1))
  done
  [ "$pending" -eq 0 ] && [ $((SECONDS - STARTED)) -ge "$MIN_WINDOW" ] && break
  [ "$SECONDS" -ge "$deadline" ] && break
  sleep 2
done

# A query's FAIL is about the dashboard: the daemon's log once at the end, not under each.
unset FAIL_LOG
for q in "${QUERIES[@]}"; do
  record=$(jq -r .record <<<"$q") title=$(jq -r .title <<<"$q") expr=$(jq -r .expr <<<"$q")
  n=${got[$expr]:-0}
  if reason=$(expected_empty "$expr"); then
    if [ "$n" -gt 0 ]; then
      pass "$record ($title): $n series (listed as expected empty: $reason)"
    else
      pass "$record ($title): expected empty: $reason"
    fi
  elif [ "$n" -gt 0 ]; then
    pass "$record ($title): $n series"
  else
    fail "$record ($title)" "no series within ${TIMEOUT}s of traffic: $expr"
  fi
done
[ "$failed" -eq 0 ] || show_log "$WORK/daemon.log" 15
print_summary
