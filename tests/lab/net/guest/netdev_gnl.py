#!/usr/bin/python3
"""netdev_gnl.py: dumps the netdev generic netlink family's queue-get and napi-get of this
network namespace as JSON, independently of dimctl (ynl and a netdev-aware iproute2 are not
in Debian 12's userland): {"queues": [{ifindex, id, type, napi_id}], "napis": [{ifindex, id,
irq, pid, defer_hard_irqs, gro_flush_timeout, irq_suspend_timeout}]}.
`netdev_gnl.py set NAPI_ID DEFER GRO_NS` sends napi-set (Linux >= 6.13) for one NAPI instead.
Attribute numbers are the kernel's UAPI (include/uapi/linux/netdev.h)."""
import json, os, socket, struct, sys

NETLINK_GENERIC, GENL_ID_CTRL = 16, 16
NLM_F_REQUEST, NLM_F_ACK, NLM_F_DUMP = 1, 4, 0x300
NLMSG_ERROR, NLMSG_DONE = 2, 3
CTRL_CMD_GETFAMILY, CTRL_ATTR_FAMILY_ID, CTRL_ATTR_FAMILY_NAME = 3, 1, 2
CMD_QUEUE_GET, CMD_NAPI_GET, CMD_NAPI_SET = 10, 11, 14
QUEUE = {1: "id", 2: "ifindex", 3: "type", 4: "napi_id"}
NAPI = {1: "ifindex", 2: "id", 3: "irq", 4: "pid", 5: "defer_hard_irqs",
        6: "gro_flush_timeout", 7: "irq_suspend_timeout"}

sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_GENERIC)
sock.bind((0, 0))
seq = 0


def attr(t, data):
    a = struct.pack("HH", 4 + len(data), t) + data
    return a + b"\0" * ((4 - len(a) % 4) % 4)


def request(family, cmd, flags, payload=b""):
    global seq
    seq += 1
    body = struct.pack("BBH", cmd, 1, 0) + payload
    sock.send(struct.pack("IHHII", 16 + len(body), family, NLM_F_REQUEST | flags, seq, 0) + body)
    out = []
    while True:
        data = sock.recv(1 << 20)
        off = 0
        while off < len(data):
            ln, typ, _, _, _ = struct.unpack_from("IHHII", data, off)
            if typ == NLMSG_DONE:
                return out
            if typ == NLMSG_ERROR:
                err = struct.unpack_from("i", data, off + 16)[0]
                if err:
                    raise OSError(-err, os.strerror(-err))
                return out
            out.append(parse(data[off + 20:off + ln]))
            if not flags & NLM_F_DUMP:
                return out
            off += (ln + 3) & ~3


def parse(b):
    attrs, off = {}, 0
    while off + 4 <= len(b):
        ln, t = struct.unpack_from("HH", b, off)
        attrs[t & 0x3fff] = b[off + 4:off + ln]
        off += (ln + 3) & ~3
    return attrs


def num(v):
    return {1: lambda: v[0], 2: lambda: struct.unpack("H", v)[0], 4: lambda: struct.unpack("I", v)[0],
            8: lambda: struct.unpack("Q", v)[0]}[len(v)]()


fam = request(GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 0, attr(CTRL_ATTR_FAMILY_NAME, b"netdev\0"))
family = num(fam[0][CTRL_ATTR_FAMILY_ID])
if sys.argv[1:2] == ["set"]:
    napi, defer, gro = map(int, sys.argv[2:5])
    request(family, CMD_NAPI_SET, NLM_F_ACK, attr(2, struct.pack("I", napi)) +
            attr(5, struct.pack("I", defer)) + attr(6, struct.pack("Q", gro)))
    sys.exit(0)
res = {}
for key, cmd, names in (("queues", CMD_QUEUE_GET, QUEUE), ("napis", CMD_NAPI_GET, NAPI)):
    try:
        res[key] = [{names[t]: num(v) for t, v in m.items() if t in names}
                    for m in request(family, cmd, NLM_F_DUMP)]
    except OSError as e:
        res[key + "_error"] = str(e)
for q in res.get("queues", []):
    q["type"] = {0: "rx", 1: "tx"}.get(q.get("type"), q.get("type"))
json.dump(res, sys.stdout, indent=1)
print()
