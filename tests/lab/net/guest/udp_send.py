#!/usr/bin/python3
"""udp_send.py NETNS SRC DSTS PORT N READY GO [SECONDS]: from network namespace NETNS, sends
UDP datagrams from SRC to each address of DSTS (comma list; one flow per destination, which
RSS hashes on the IPv4 pair) port PORT, once the file GO exists (READY is touched when the
sockets are up). N > 0: exactly N datagrams per destination, round robin. N = 0: as fast as
possible for SECONDS. Nothing listens: the receiver's stack drops them after the driver's NAPI
counted them (an ICMP port unreachable would be traffic the other way: a closed-port socket
per destination on the receiver avoids it). UDP_SOCKETS=K (environment): K sending sockets,
i.e. K flows with distinct source ports, per destination. UDP_PPS=R: at most R datagrams per
second in exact mode (a qdisc that overflows drops silently: UDP's sendto still succeeds).
Prints "sent=TOTAL per_flow=..."."""
import ctypes, os, socket, sys, time

netns, src, dsts, port, n, ready, go = sys.argv[1:8]
seconds = float(sys.argv[8]) if len(sys.argv) > 8 else 0
dsts, port, n = dsts.split(","), int(port), int(n)
# Receiving sockets in this namespace (no ICMP unreachable back); tiny buffers: drop, don't keep.
rx = []
for d in dsts:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.bind((d, port))
    rx.append(s)
libc = ctypes.CDLL(None, use_errno=True)
fd = os.open(f"/run/netns/{netns}", os.O_RDONLY)
if libc.setns(fd, 0x40000000) != 0:  # CLONE_NEWNET
    sys.exit(f"setns: {os.strerror(ctypes.get_errno())}")
k = int(os.environ.get("UDP_SOCKETS", "1"))
flows = []
for d in dsts:
    for _ in range(k):
        t = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        t.bind((src, 0))
        flows.append((t, (d, port)))
open(ready, "w").close()
deadline = time.time() + 120
while not os.path.exists(go):
    if time.time() > deadline:
        sys.exit("no go")
    time.sleep(0.02)
payload = b"x" * 64
sent = [0] * len(flows)
pps = float(os.environ.get("UDP_PPS", "0"))
if n > 0:
    t0, done = time.time(), 0
    for _ in range(n):
        for i, (t, a) in enumerate(flows):
            t.sendto(payload, a)
            sent[i] += 1
        done += len(flows)
        if pps > 0 and done % 32 < len(flows):
            ahead = t0 + done / pps - time.time()
            if ahead > 0:
                time.sleep(ahead)
else:
    end = time.time() + seconds
    while time.time() < end:
        for _ in range(64):
            for i, (t, a) in enumerate(flows):
                try:
                    t.sendto(payload, a)
                    sent[i] += 1
                except OSError:  # ENOBUFS: the qdisc is full
                    pass
print(f"sent={sum(sent)} per_flow={','.join(map(str, sent))}")
