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
DIMCTL=$(readlink -f "${1:?usage: record-veth.sh DIMCTL OUTPUT SECONDS [demo|steps]}")
OUT=$(readlink -f "${2:?output file}")
DURATION=${3:?seconds}
PATTERN=${4:-demo}
[ "$(id -u)" -eq 0 ] || { echo "record-veth.sh: needs root (netns, BPF)" >&2; exit 1; }

NS=dimctl-vrec-$$
NS2=dimctl-vsend-$$
REC_PID=""
cleanup() {
  [ -n "$REC_PID" ] && kill -INT "$REC_PID" 2>/dev/null && wait "$REC_PID" 2>/dev/null
  ip netns del "$NS" 2>/dev/null || true
  ip netns del "$NS2" 2>/dev/null || true
}
trap cleanup EXIT
for ns in "$NS" "$NS2"; do
  ip netns add "$ns"
  ip netns exec "$ns" sysctl -qw net.ipv6.conf.default.disable_ipv6=1 net.ipv6.conf.all.disable_ipv6=1
  ip -n "$ns" link set lo up
done
ip link add vrec-s netns "$NS2" type veth peer name vrec-r netns "$NS"
ip -n "$NS2" addr add 10.213.9.1/24 dev vrec-s
ip -n "$NS" addr add 10.213.9.2/24 dev vrec-r
# TSO/GSO off on the sender and GRO on on the receiver: only then does veth poll its own NAPI.
ip netns exec "$NS2" ethtool -K vrec-s tso off gso off >/dev/null 2>&1 || true
ip netns exec "$NS" ethtool -K vrec-r gro on >/dev/null
mac() { ip -n "$1" link show dev "$2" | awk '/link\/ether/ {print $2}'; }
ip -n "$NS2" neigh replace 10.213.9.2 lladdr "$(mac "$NS" vrec-r)" dev vrec-s nud permanent
ip -n "$NS" neigh replace 10.213.9.1 lladdr "$(mac "$NS2" vrec-s)" dev vrec-r nud permanent
ip -n "$NS2" link set vrec-s up
ip -n "$NS" link set vrec-r up

log=$(mktemp)
ip netns exec "$NS" "$DIMCTL" record --output "$OUT" --interval 20ms --duration "${DURATION}s" \
  --devices vrec-r --keep 0 >"$log" 2>&1 &
REC_PID=$!
for _ in $(seq 150); do grep -qs "recording to" "$log" && break; sleep 0.1; done
grep -qs "recording to" "$log" || { cat "$log" >&2; exit 1; }

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
      # shellcheck disable=SC2016 # the inner shell expands it
      ip netns exec "$NS2" bash -c 'for i in $(seq 20000); do echo x >/dev/udp/10.213.9.2/9; done' \
        2>/dev/null || true
      sleep 1 ;;
    steps)
      bash_burst 1; fast_burst 1; sleep 1 ;;
    *) echo "record-veth.sh: unknown pattern '$PATTERN'" >&2; exit 2 ;;
  esac
done
wait "$REC_PID"
REC_PID=""
"$DIMCTL" trace show --summary "$OUT"
