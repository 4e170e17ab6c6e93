# shellcheck shell=bash
# Sourced by the e2e scripts that start an exporter and Debian's Prometheus on loopback
# (prometheus/run.sh, webconfig/tls_scrape.sh): a work directory, the processes they started
# stopped by PID at exit (TERM, up to 5 s, then KILL) and, on failure, the two logs they keep
# there. e2e_start TAG sets $tmp; the script adds each background PID to `pids`.

e2e_cleanup() {
  local rc=$?
  # Stop what we started, by PID only, then make sure each is gone before removing its files.
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ]; then
    echo "--- exporter log"; cat "$tmp/exporter.log" 2>/dev/null || true
    echo "--- prometheus log (tail)"; tail -n 30 "$tmp/prometheus.log" 2>/dev/null || true
  fi
  rm -rf "$tmp"
  exit "$rc"
}

e2e_start() {  # e2e_start TAG
  tmp=$(mktemp -d "/tmp/dimctl-e2e-$1.XXXXXX")
  pids=()
  trap e2e_cleanup EXIT
  trap 'exit 1' INT TERM
}

# A port nobody listens on right now (the kernel picks it; the tiny race is acceptable here).
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null && return
  local p
  for _ in $(seq 1 100); do
    p=$((20000 + RANDOM % 30000))
    ss -ltnH "sport = :$p" | grep -q . || { echo "$p"; return; }
  done
  echo "FAIL: no free port" >&2; return 1
}
