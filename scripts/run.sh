#!/usr/bin/env bash
# `sudo make run`: the controller on this host with the shipped config (shadow: it writes
# nothing) or CONFIG=FILE (e.g. deploy/config/examples/demo-veth-napi.yaml, which enforces on the
# demo veth); metrics on 127.0.0.1 only.
set -euo pipefail
BUILD=${1:-build}
CONFIG=${2:-deploy/config/dimctl.yaml}
cd "$(dirname "$0")/.."
DIMCTL="$BUILD/userspace/cli/dimctl"

if [ "$(id -u)" -ne 0 ]; then
  echo "run.sh: dimctl loads BPF programs and needs root (try: sudo make run)" >&2
  exit 1
fi
mountpoint -q /sys/kernel/tracing || mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null || true
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf 2>/dev/null || true

"$DIMCTL" check-config "$CONFIG"
listen=$(sed -n 's/^[[:space:]]*listen:[[:space:]]*\([^[:space:]#]*\).*/\1/p' "$CONFIG" | head -n 1)
listen=${listen:-127.0.0.1:9977}
cat <<MSG
dimctl: starting with config $CONFIG (shadow mode, nothing written, unless a rule there
says mode: enforce; those devices' originals are restored at exit).
  metrics:  curl http://$listen/metrics
  state:    $DIMCTL status --address $listen
  live:     $DIMCTL top --address $listen
  health:   curl http://$listen/healthz
On an idle host there are no queues to show: in another terminal,
  sudo scripts/demo-traffic.sh 60
sends bounded UDP over a demo veth (never eth0) so per-queue data and decisions appear.
Stop with Ctrl-C.
MSG
exec "$DIMCTL" run --config "$CONFIG"
