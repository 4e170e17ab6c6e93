#!/usr/bin/env bash
# e2e: real clients against an exporter serving a web config (TLS, a required client
# certificate, basic auth, headers): Debian's Prometheus scrapes it with its tls_config and
# basic_auth and the series arrive; curl without credentials and with a wrong password gets
# 401, with them 200; without a client certificate, or with one the CA never signed, the TLS
# session fails; TLS 1.1 is refused by the server (its protocol_version alert to a client that
# offers it), 1.2 and 1.3 are served; the health paths answer without credentials
# (--web.health-without-auth); a rotated certificate is served without a restart, and
# Prometheus keeps scraping across the rotation.
#
# usage: tls_scrape.sh EXPORTER_BINARY
#   EXPORTER_BINARY: the demo state server (tests/e2e/prometheus/state_server.cc), or with
#   DIMCTL_E2E_EXPORTER_CMD='... {address} ... {web_config}' any exporter command.
# Exit: 0 pass, 1 fail, 77 skipped (no prometheus binary).
set -euo pipefail

PROMETHEUS=${PROMETHEUS:-$(command -v prometheus || true)}
if [ -z "$PROMETHEUS" ]; then
  echo "SKIP: prometheus server not installed (apt-get install prometheus)"
  exit 77
fi
for tool in curl jq openssl; do
  command -v "$tool" >/dev/null || { echo "FAIL: $tool is required"; exit 1; }
done
EXPORTER=${1:-}
TIMEOUT=${DIMCTL_E2E_TIMEOUT:-60}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/e2e/lib.sh
source "$here/../lib.sh"
e2e_start tls

failed=0
pass() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; failed=1; }

bash "$here/../../support/pki.sh" "$tmp"
# The exporter reads copies, which the rotation replaces as a Secret update would.
cp "$tmp/server.pem" "$tmp/live.pem"
cp "$tmp/server.key" "$tmp/live.key"
# "secret", bcrypt cost 4 (test speed; deployments use 10 or more).
hash='$2b$04$GQXUAjV5KCHcLij4adhPFeMzG8dZtg6j9i87mcU3zJuwmkQmZVFLC'
cat >"$tmp/web.yml" <<YAML
tls_server_config:
  cert_file: live.pem
  key_file: live.key
  client_auth_type: RequireAndVerifyClientCert
  client_ca_file: ca.pem
http_server_config:
  headers:
    X-Frame-Options: deny
    X-Content-Type-Options: nosniff
basic_auth_users:
  prometheus: $hash
YAML

# --- the exporter
if [ -n "${DIMCTL_E2E_EXPORTER_CMD:-}" ]; then
  target="127.0.0.1:$(free_port)"
  cmd=${DIMCTL_E2E_EXPORTER_CMD//\{address\}/$target}
  cmd=${cmd//\{web_config\}/$tmp/web.yml}
  echo "exporter: $cmd"
  bash -c "exec $cmd" >"$tmp/exporter.log" 2>&1 &
  pids+=($!)
else
  [ -x "$EXPORTER" ] || { echo "FAIL: exporter binary not given or not executable"; exit 1; }
  "$EXPORTER" --address 127.0.0.1:0 --port-file "$tmp/exporter.port" \
    --web.config.file "$tmp/web.yml" --web.health-without-auth >"$tmp/exporter.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 1 100); do [ -s "$tmp/exporter.port" ] && break; sleep 0.1; done
  [ -s "$tmp/exporter.port" ] || { echo "FAIL: exporter did not report its port"; exit 1; }
  target="127.0.0.1:$(cat "$tmp/exporter.port")"
fi
url="https://$target"
tls=(--cacert "$tmp/ca.pem" --cert "$tmp/client.pem" --key "$tmp/client.key")
for _ in $(seq 1 100); do
  curl -s -o /dev/null --max-time 1 "${tls[@]}" "$url/healthz" && break
  sleep 0.2
done
echo "exporter: $url"

code() {  # code CURL_ARGS... -> the HTTP status ("000" when no HTTP response came)
  curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$@" || true
}

# --- basic auth
c=$(code "${tls[@]}" "$url/metrics"); [ "$c" = 401 ] && pass "no credentials: 401" || fail "no credentials: $c"
c=$(code "${tls[@]}" -u prometheus:guess "$url/metrics"); [ "$c" = 401 ] && pass "wrong password: 401" || fail "wrong password: $c"
c=$(code "${tls[@]}" -u nobody:secret "$url/metrics"); [ "$c" = 401 ] && pass "unknown user: 401" || fail "unknown user: $c"
body=$(curl -s --max-time 5 "${tls[@]}" -u prometheus:secret "$url/metrics" || true)
grep -q '^dimctl_build_info' <<<"$body" && pass "right password: /metrics served" || fail "right password: no dimctl_build_info"
c=$(code "${tls[@]}" "$url/healthz"); [ "$c" = 200 ] && pass "/healthz without credentials (--web.health-without-auth): 200" || fail "/healthz: $c"
c=$(code "${tls[@]}" "$url/api/v1/state"); [ "$c" = 401 ] && pass "/api/v1/state without credentials: 401" || fail "/api/v1/state: $c"
head=$(curl -s -D - -o /dev/null --max-time 5 "${tls[@]}" "$url/metrics" || true)
grep -qi '^X-Frame-Options: deny' <<<"$head" && grep -qi '^WWW-Authenticate: Basic' <<<"$head" &&
  pass "headers on a 401: X-Frame-Options, WWW-Authenticate" || fail "headers: $head"

# --- client certificates
c=$(code --cacert "$tmp/ca.pem" -u prometheus:secret "$url/metrics")
[ "$c" = 000 ] && pass "no client certificate: TLS failure" || fail "no client certificate: $c"
c=$(code --cacert "$tmp/ca.pem" --cert "$tmp/stranger.pem" --key "$tmp/stranger.key" -u prometheus:secret "$url/metrics")
[ "$c" = 000 ] && pass "client certificate of another CA: TLS failure" || fail "stranger certificate: $c"

# --- protocol versions. The clients run at OpenSSL security level 0 so that they offer TLS 1.1:
# the refusal must come from the server (alert 70, protocol_version).
for v in 1.2 1.3; do
  c=$(code "${tls[@]}" -u prometheus:secret --tlsv"$v" --tls-max "$v" "$url/metrics")
  [ "$c" = 200 ] && pass "TLS $v: 200" || fail "TLS $v: $c"
done
s11=$(echo | timeout 10 openssl s_client -connect "$target" -tls1_1 -cipher 'DEFAULT:@SECLEVEL=0' \
  -cert "$tmp/client.pem" -key "$tmp/client.key" 2>&1 || true)
grep -q 'alert protocol version' <<<"$s11" && pass "TLS 1.1: refused by the server (alert protocol version)" ||
  fail "TLS 1.1: $(grep -iE 'alert|Protocol|Cipher is' <<<"$s11" | head -3)"
c=$(code "${tls[@]}" -u prometheus:secret --tlsv1.1 --tls-max 1.1 --ciphers 'DEFAULT:@SECLEVEL=0' "$url/metrics")
[ "$c" = 000 ] && pass "TLS 1.1 with curl: no response" || fail "TLS 1.1 with curl: $c"

# --- Prometheus with tls_config and basic_auth
prom="127.0.0.1:$(free_port)"
cat >"$tmp/prometheus.yml" <<YAML
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: dimctl
    scrape_interval: 1s
    scrape_timeout: 1s
    scheme: https
    tls_config:
      ca_file: $tmp/ca.pem
      cert_file: $tmp/client.pem
      key_file: $tmp/client.key
    basic_auth:
      username: prometheus
      password: secret
    static_configs:
      - targets: ["$target"]
YAML
"$PROMETHEUS" --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/data" \
  --web.listen-address="$prom" --log.level=warn >"$tmp/prometheus.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 150); do curl -fsS -o /dev/null --max-time 1 "http://$prom/-/ready" 2>/dev/null && break; sleep 0.2; done

query() {
  curl -fsS --max-time 2 -G "http://$prom/api/v1/query" --data-urlencode "query=$1" 2>/dev/null |
    jq -r 'if .status == "success" and (.data.result | length) > 0 then .data.result[0].value[1] else empty end'
}
wait_value() {  # wait_value PROMQL WANT -> the value, once it equals WANT (or what came last)
  local got="" deadline=$((SECONDS + TIMEOUT))
  until [ "$got" = "$2" ] || [ $SECONDS -ge $deadline ]; do
    sleep 0.5
    got=$(query "$1" || true)
  done
  echo "$got"
}
got=$(wait_value 'dimctl_build_info{job="dimctl"}' 1)
[ "$got" = 1 ] && pass "prometheus scraped over TLS + basic auth: dimctl_build_info = 1" ||
  fail "prometheus: dimctl_build_info = '${got:-no result}'"
if [ -z "${DIMCTL_E2E_EXPORTER_CMD:-}" ]; then  # the demo's synthetic state (fake_state.h)
  got=$(wait_value 'dimctl_dim_wanted_usecs{device="eth0",queue="0",direction="rx"}' 64)
  [ "$got" = 64 ] && pass "prometheus: dimctl_dim_wanted_usecs = 64" || fail "prometheus: wanted usecs '${got:-no result}'"
else  # the real daemon: its readiness, whatever the host's traffic
  got=$(wait_value 'dimctl_ready{job="dimctl"}' 1)
  [ "$got" = 1 ] && pass "prometheus: dimctl_ready = 1" || fail "prometheus: dimctl_ready '${got:-no result}'"
fi

# --- rotation: a new key and certificate, each replaced atomically (the key first: between the
# two the pair does not match and the old one stays in service)
served_cn() {
  echo | timeout 10 openssl s_client -connect "$target" -CAfile "$tmp/ca.pem" \
    -cert "$tmp/client.pem" -key "$tmp/client.key" 2>/dev/null |
    sed -n 's/^subject=.*CN *= *\([^,]*\).*/\1/p' | head -1
}
cn=$(served_cn); [ "$cn" = dimctl-server ] && pass "served before rotation: $cn" || fail "before rotation: '$cn'"
cp "$tmp/server2.key" "$tmp/live.key.new" && mv "$tmp/live.key.new" "$tmp/live.key"
cn=$(served_cn); [ "$cn" = dimctl-server ] && pass "half-rotated (key only): still $cn" || fail "half-rotated: '$cn'"
cp "$tmp/server2.pem" "$tmp/live.pem.new" && mv "$tmp/live.pem.new" "$tmp/live.pem"
cn=$(served_cn); [ "$cn" = dimctl-server-rotated ] && pass "after rotation: $cn, no restart" || fail "after rotation: '$cn'"
rotated_at=$(date +%s)
# Prometheus keeps scraping: a successful scrape after the rotation.
deadline=$((SECONDS + 20)); ok=0
while [ $SECONDS -lt $deadline ]; do
  t=$(curl -fsS --max-time 2 "http://$prom/api/v1/targets" | jq -r '.data.activeTargets[0] | select(.health == "up") | .lastScrape' || true)
  if [ -n "$t" ] && [ "$(date -d "$t" +%s 2>/dev/null || echo 0)" -gt "$rotated_at" ]; then ok=1; break; fi
  sleep 0.5
done
[ "$ok" = 1 ] && pass "prometheus scraped up after the rotation" || fail "prometheus: no healthy scrape after the rotation"
kill -0 "${pids[0]}" 2>/dev/null && pass "exporter still running (same process)" || fail "exporter died"
exit "$failed"
