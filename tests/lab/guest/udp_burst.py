#!/usr/bin/python3
"""udp_burst.py NETNS SRC DST PORT N READY GO: sends exactly N UDP datagrams from network
namespace NETNS (SRC -> DST:PORT) once the file GO exists, after creating the receiving socket
on DST in the current namespace and touching READY. Prints "sent=N received=M"."""
import ctypes, os, socket, sys, time

netns, src, dst, port, n, ready, go = sys.argv[1:8]
port, n = int(port), int(n)
rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
rx.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
rx.bind((dst, port))
libc = ctypes.CDLL(None, use_errno=True)
fd = os.open(f"/run/netns/{netns}", os.O_RDONLY)
if libc.setns(fd, 0x40000000) != 0:  # CLONE_NEWNET
    sys.exit(f"setns: {os.strerror(ctypes.get_errno())}")
tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
tx.bind((src, 0))
open(ready, "w").close()
deadline = time.time() + 60
while not os.path.exists(go):
    if time.time() > deadline:
        sys.exit("no go")
    time.sleep(0.02)
payload = b"x" * 64
for i in range(n):
    tx.sendto(payload, (dst, port))
rx.settimeout(2.0)
got = 0
try:
    while got < n:
        rx.recv(2048)
        got += 1
except socket.timeout:
    pass
print(f"sent={n} received={got}")
