#!/usr/bin/env python3
# udp_flood.py SECONDS FLOWS: UDP from the veth pair's vb side (10.78.0.2, bench/bpf/veth_pair.sh) to
# 10.78.0.1:9, FLOWS source ports, at most 20 M datagrams; prints how many were sent. Used by the
# BPF benchmarks to keep va's NAPI polling.
import socket, sys, time
seconds, flows = float(sys.argv[1]), int(sys.argv[2])
limit = 20_000_000
socks = []
for f in range(flows):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("10.78.0.2", 42000 + f))
    socks.append(s)
payload = b"x" * 32
dst = ("10.78.0.1", 9)
sent, end = 0, time.monotonic() + seconds
while sent < limit and time.monotonic() < end:
    for s in socks:
        for _ in range(64):
            try:
                s.sendto(payload, dst)
            except OSError:
                pass
        sent += 64
print(sent)
