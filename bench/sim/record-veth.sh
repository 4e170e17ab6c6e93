#!/usr/bin/env bash
# bench/sim/record-veth.sh DIMCTL OUTPUT SECONDS [demo|steps]: records (`dimctl record`, 20 ms)
# the receiver NAPI of a veth pair between two private network namespaces while sending UDP
# through it, for the simulator's trace evaluation (bench/sim/run.sh replays
# tests/fixtures/traces/*.dtr). Needs root; never touches any other interface. Run it under the
# shared kernel lock: flock /tmp/dimctl-kernel.lock bench/sim/record-veth.sh ...
#   demo   scripts/demo-traffic.sh's pattern: bash-paced bursts of 20000 datagrams, 1 s pauses
#   steps  rate steps: 1 s of the bash-paced sender (~10k/s), 1 s of a Python sender as fast as
#          it goes (~10x), 1 s idle, repeated
set -euo pipefail
# shellcheck source=tests/kernel/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../tests/kernel/lib.sh"
DIMCTL=$(readlink -f "${1:?usage: record-veth.sh DIMCTL OUTPUT SECONDS [demo|steps]}")
OUT=$(readlink -f "${2:?output file}")
DURATION=${3:?seconds}
PATTERN=${4:-demo}
[ "$(id -u)" -eq 0 ] || { echo "record-veth.sh: needs root (netns, BPF)" >&2; exit 1; }

REC_PID=""
# A recorder still running at exit is stopped by SIGINT, which ends its file cleanly, before
# lib.sh's cleanup deletes its namespace.
on_cleanup() {
  [ -n "$REC_PID" ] && kill -INT "$REC_PID" 2>/dev/null && wait "$REC_PID" 2>/dev/null
}
kernel_test_start vrec
netns_add --no-ipv6 "$NS" "$NS2"
veth_pair --static-neigh "$NS2" vrec-s 10.213.9.1 "$NS" vrec-r 10.213.9.2

log=$WORK/record.log
ip netns exec "$NS" "$DIMCTL" record --output "$OUT" --interval 20ms --duration "${DURATION}s" \
  --devices vrec-r --keep 0 >"$log" 2>&1 &
REC_PID=$!
poll 150 grep -qs "recording to" "$log" || { cat "$log" >&2; exit 1; }

bash_burst() {  # the demo's sender: one datagram per `echo`, as fast as bash goes
  ip netns exec "$NS2" timeout "$1" bash -c \
    'while :; do echo x >/dev/udp/10.213.9.2/9; done' 2>/dev/null || true
}
fast_burst() {  # a Python sender in a tight loop (ENOBUFS when veth's ring is full: retried)
  ip netns exec "$NS2" timeout "$1" python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
while True:
    try:
        s.sendto(b"x", ("10.213.9.2", 9))
    except OSError:
        pass' 2>/dev/null || true
}
end=$((SECONDS + DURATION))
while [ "$SECONDS" -lt "$end" ] && kill -0 "$REC_PID" 2>/dev/null; do
  case "$PATTERN" in
    demo)
      udp_burst "$NS2" 10.213.9.2 20000 || true
      sleep 1 ;;
    steps)
      bash_burst 1; fast_burst 1; sleep 1 ;;
    *) echo "record-veth.sh: unknown pattern '$PATTERN'" >&2; exit 2 ;;
  esac
done
wait "$REC_PID"
REC_PID=""
"$DIMCTL" trace show --summary "$OUT"
