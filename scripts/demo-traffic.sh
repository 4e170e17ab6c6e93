#!/usr/bin/env bash
# Bounded demo traffic for `sudo make run` on an idle host: a veth pair whose sender end lives in
# a private namespace and whose receiver end (dimdemo0) is in this namespace, where the daemon
# sees its NAPI. TSO off on the sender and GRO on on the receiver so veth polls its own NAPI.
# Sends UDP only to the receiver's address for SECONDS (default 30), then removes everything.
# Never touches eth0.
set -euo pipefail
SECONDS_TO_RUN=${1:-30}
NS=dimctl-demo
[ "$(id -u)" -eq 0 ] || { echo "demo-traffic.sh: needs root" >&2; exit 1; }
cleanup() { ip link del dimdemo0 2>/dev/null || true; ip netns del "$NS" 2>/dev/null || true; }
trap cleanup EXIT
cleanup
ip netns add "$NS"
ip link add dimdemo0 type veth peer name dimdemo1 netns "$NS"
ip addr add 10.213.1.1/24 dev dimdemo0
ip -n "$NS" addr add 10.213.1.2/24 dev dimdemo1
ip link set dimdemo0 up
ip -n "$NS" link set dimdemo1 up
ip netns exec "$NS" ethtool -K dimdemo1 tso off gso off >/dev/null 2>&1 || true
ethtool -K dimdemo0 gro on >/dev/null
echo "demo-traffic: UDP 10.213.1.2 -> 10.213.1.1 (dimdemo0) for ${SECONDS_TO_RUN}s; watch: dimctl top"
end=$((SECONDS + SECONDS_TO_RUN))
# Bursts then pauses, so DIM sees the load change and moves: one datagram at a time (QD=1, what
# bash's /dev/udp gives), then, with python3, a few seconds of flood (as fast as one socket
# sends), where moderation can batch: with `method: napi` packets per poll rise there.
flood() {
  ip netns exec "$NS" python3 - "$1" <<'PY' 2>/dev/null || true
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
end, payload = time.monotonic() + float(sys.argv[1]), b"x" * 32
while time.monotonic() < end:
    for _ in range(64):
        try:
            s.sendto(payload, ("10.213.1.1", 9))
        except OSError:
            pass
PY
}
while [ "$SECONDS" -lt "$end" ]; do
  ip netns exec "$NS" bash -c 'for i in $(seq 20000); do echo x >/dev/udp/10.213.1.1/9; done' 2>/dev/null || true
  if command -v python3 >/dev/null; then flood 4; fi
  sleep 1
done
