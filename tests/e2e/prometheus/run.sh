#!/usr/bin/env bash
# e2e: a real Prometheus server (Debian's `prometheus`) scrapes a dimctl exporter every second;
# we wait (bounded) until Prometheus's query API returns the expected series.
#
# usage: run.sh [STATE_SERVER_BINARY]
#
# Which exporter is scraped (first match wins):
#   DIMCTL_E2E_TARGET=host:port   an exporter that is already running; nothing is started.
#   DIMCTL_E2E_EXPORTER_CMD='...' a command that starts an exporter; "{address}" in it is replaced
#                                 by 127.0.0.1:<free port>, e.g.
#                                 'build/userspace/cli/dimctl run --web.listen-address {address}'
#   STATE_SERVER_BINARY           the test-only demo exporter (synthetic ControllerState).
# What must be found (one check per line, "PROMQL|VALUE", VALUE a number or "any"):
#   DIMCTL_E2E_CHECKS             defaults: demo -> exact per-queue values of the synthetic state;
#                                 real exporter -> build_info and at least one queue series.
#   DIMCTL_E2E_TIMEOUT            seconds to wait for all checks (default 60).
# Exit: 0 pass, 1 fail, 77 skipped (no prometheus binary).
set -euo pipefail

PROMETHEUS=${PROMETHEUS:-$(command -v prometheus || true)}
if [ -z "$PROMETHEUS" ]; then
  echo "SKIP: prometheus server not installed (apt-get install prometheus)"
  exit 77
fi
for tool in curl jq; do
  command -v "$tool" >/dev/null || { echo "FAIL: $tool is required"; exit 1; }
done

STATE_SERVER=${1:-}
TIMEOUT=${DIMCTL_E2E_TIMEOUT:-60}
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "$0")/../lib.sh"
e2e_start prom

wait_http() {  # wait_http URL SECONDS
  local deadline=$((SECONDS + $2))
  while [ $SECONDS -lt $deadline ]; do
    curl -fsS -o /dev/null --max-time 1 "$1" 2>/dev/null && return 0
    sleep 0.2
  done
  return 1
}

# --- the exporter
demo=0
if [ -n "${DIMCTL_E2E_TARGET:-}" ]; then
  target=$DIMCTL_E2E_TARGET
  echo "exporter: existing $target"
elif [ -n "${DIMCTL_E2E_EXPORTER_CMD:-}" ]; then
  target="127.0.0.1:$(free_port)"
  cmd=${DIMCTL_E2E_EXPORTER_CMD//\{address\}/$target}
  echo "exporter: $cmd"
  bash -c "exec $cmd" >"$tmp/exporter.log" 2>&1 &
  pids+=($!)
else
  [ -x "$STATE_SERVER" ] || { echo "FAIL: demo exporter binary not given or not executable"; exit 1; }
  demo=1
  "$STATE_SERVER" --address 127.0.0.1:0 --port-file "$tmp/exporter.port" >"$tmp/exporter.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 1 100); do [ -s "$tmp/exporter.port" ] && break; sleep 0.1; done
  [ -s "$tmp/exporter.port" ] || { echo "FAIL: demo exporter did not report its port"; exit 1; }
  target="127.0.0.1:$(cat "$tmp/exporter.port")"
  echo "exporter: demo state server on $target"
fi
wait_http "http://$target/metrics" 30 || { echo "FAIL: exporter not serving /metrics on $target"; exit 1; }

# --- Prometheus, scraping the exporter every second
prom="127.0.0.1:$(free_port)"
cat >"$tmp/prometheus.yml" <<YAML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: dimctl
    scrape_interval: 1s
    scrape_timeout: 1s
    static_configs:
      - targets: ["$target"]
YAML
"$PROMETHEUS" --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/data" \
  --web.listen-address="$prom" --log.level=warn >"$tmp/prometheus.log" 2>&1 &
pids+=($!)
wait_http "http://$prom/-/ready" 30 || { echo "FAIL: prometheus not ready on $prom"; exit 1; }
echo "prometheus: $prom"

if [ -n "${DIMCTL_E2E_CHECKS:-}" ]; then
  checks=$DIMCTL_E2E_CHECKS
elif [ "$demo" -eq 1 ]; then
  # Values of tests/unit/exporters/fake_state.h (wanted usecs, profile, applied rx-usecs) and a
  # counter that the demo advances every second, so rate() must become positive.
  checks='dimctl_build_info{job="dimctl"}|1
dimctl_dim_wanted_usecs{device="eth0",queue="0",direction="rx"}|64
dimctl_dim_profile_index{device="eth0",queue="0",direction="rx",source="applied"}|2
dimctl_coalesce_rx_usecs{device="eth0",source="applied"}|62
rate(dimctl_napi_packets_total{device="eth0",queue="0",direction="rx"}[5s]) > 0|any'
else
  checks='dimctl_build_info{job="dimctl"}|1
count(dimctl_napi_polls_total) > 0|any'
fi

query() {  # query PROMQL -> first sample's value, empty when no result
  curl -fsS --max-time 2 -G "http://$prom/api/v1/query" --data-urlencode "query=$1" 2>/dev/null |
    jq -r 'if .status == "success" and (.data.result | length) > 0 then .data.result[0].value[1] else empty end'
}

matches() {  # matches GOT WANT
  [ -n "$1" ] && { [ "$2" = any ] || awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 == b + 0) }'; }
}

deadline=$((SECONDS + TIMEOUT))
failed=0
while IFS='|' read -r expr want; do
  [ -n "$expr" ] || continue
  got=""
  until matches "$got" "$want" || [ $SECONDS -ge $deadline ]; do
    sleep 0.5
    got=$(query "$expr" || true)
  done
  if matches "$got" "$want"; then
    echo "ok: $expr = $got"
  else
    echo "FAIL: $expr: expected $want, got ${got:-no result} within ${TIMEOUT}s"
    failed=1
  fi
done <<<"$checks"

# The scrape itself must be healthy: Prometheus's own view of the target.
health=$(curl -fsS --max-time 2 "http://$prom/api/v1/targets" | jq -r '.data.activeTargets[0].health')
if [ "$health" != up ]; then
  echo "FAIL: prometheus target health is '$health'"
  failed=1
else
  echo "ok: target health up"
fi
exit "$failed"
