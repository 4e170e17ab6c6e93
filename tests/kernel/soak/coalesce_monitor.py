#!/usr/bin/python3
"""Kernel-side witness of every coalescing write in the calling network namespace.

Subscribes to the ethtool generic netlink "monitor" group and writes one line per
ETHTOOL_MSG_COALESCE_NTF, which the kernel sends after every successful coalesce SET, netlink
or ioctl, by any process:

    NTF <monotonic seconds> <ifindex> <ifname> <rx-frames or ->

The name is the device's name when the kernel sent the notification; the ifindex follows a
device across renames. Prints "READY" once subscribed (start the writers after that) and
"LOST <n>" when the socket overran (ENOBUFS): notifications were then lost and nothing can be
vouched for. Stops on SIGTERM. Standard library only (Debian's /usr/bin/python3).

usage: coalesce_monitor.py OUT_FILE
"""
import errno
import signal
import socket
import struct
import sys
import time

NETLINK_GENERIC = 16
SOL_NETLINK = 270
NETLINK_ADD_MEMBERSHIP = 1
GENL_ID_CTRL = 0x10
CTRL_CMD_GETFAMILY = 3
CTRL_ATTR_FAMILY_ID = 1
CTRL_ATTR_FAMILY_NAME = 2
CTRL_ATTR_MCAST_GROUPS = 7
CTRL_ATTR_MCAST_GRP_NAME = 1
CTRL_ATTR_MCAST_GRP_ID = 2
NLM_F_REQUEST = 1
NLMSG_ERROR = 2
ETHTOOL_MSG_COALESCE_NTF = 21  # <linux/ethtool_netlink.h>, kernel -> user
ETHTOOL_A_COALESCE_HEADER = 1
ETHTOOL_A_COALESCE_RX_MAX_FRAMES = 3
ETHTOOL_A_HEADER_DEV_INDEX = 1
ETHTOOL_A_HEADER_DEV_NAME = 2
NLA_TYPE_MASK = 0x3FFF


def attrs(buf):
    """(type, payload) of each netlink attribute in buf."""
    off = 0
    while off + 4 <= len(buf):
        length, typ = struct.unpack_from("=HH", buf, off)
        if length < 4 or off + length > len(buf):
            raise ValueError(f"bad attribute length {length} at offset {off}")
        yield typ & NLA_TYPE_MASK, buf[off + 4:off + length]
        off += (length + 3) & ~3


def messages(buf):
    """(type, payload after nlmsghdr) of each netlink message in buf."""
    off = 0
    while off + 16 <= len(buf):
        length, typ, _flags, _seq, _pid = struct.unpack_from("=IHHII", buf, off)
        if length < 16 or off + length > len(buf):
            raise ValueError(f"bad message length {length} at offset {off}")
        yield typ, buf[off + 16:off + length]
        off += (length + 3) & ~3


def resolve_family(sock):
    """The ethtool family id and its monitor group id, from the generic netlink controller."""
    name = b"ethtool\0"
    attr = struct.pack("=HH", 4 + len(name), CTRL_ATTR_FAMILY_NAME) + name
    attr += b"\0" * (-len(attr) % 4)
    payload = struct.pack("=BBH", CTRL_CMD_GETFAMILY, 1, 0) + attr
    sock.send(struct.pack("=IHHII", 16 + len(payload), GENL_ID_CTRL, NLM_F_REQUEST, 1, 0) + payload)
    family = group = None
    for typ, body in messages(sock.recv(65536)):
        if typ == NLMSG_ERROR:
            code = struct.unpack_from("=i", body)[0]
            raise OSError(-code, "CTRL_CMD_GETFAMILY ethtool")
        for a, v in attrs(body[4:]):
            if a == CTRL_ATTR_FAMILY_ID:
                family = struct.unpack_from("=H", v)[0]
            elif a == CTRL_ATTR_MCAST_GROUPS:
                for _, grp in attrs(v):
                    fields = dict(attrs(grp))
                    if fields.get(CTRL_ATTR_MCAST_GRP_NAME, b"").rstrip(b"\0") == b"monitor":
                        group = struct.unpack_from("=I", fields[CTRL_ATTR_MCAST_GRP_ID])[0]
    if family is None or group is None:
        raise RuntimeError("ethtool genetlink family or its monitor group not found")
    return family, group


def main():
    out = open(sys.argv[1], "w", buffering=1)
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    ctl = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_GENERIC)
    ctl.bind((0, 0))
    family, group = resolve_family(ctl)
    ctl.close()
    mon = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_GENERIC)
    try:
        # Root may exceed rmem_max: a burst of notifications must not overrun the socket.
        mon.setsockopt(socket.SOL_SOCKET, 33, 8 << 20)  # SO_RCVBUFFORCE
    except OSError:
        mon.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    mon.bind((0, 0))
    mon.setsockopt(SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, group)
    mon.settimeout(0.2)
    out.write("READY\n")
    while not stop:
        try:
            buf = mon.recv(1 << 20)
        except socket.timeout:
            continue
        except InterruptedError:
            continue
        except OSError as e:
            if e.errno == errno.ENOBUFS:
                out.write("LOST 1\n")
                continue
            raise
        now = time.monotonic()
        for typ, body in messages(buf):
            if typ != family or len(body) < 4 or body[0] != ETHTOOL_MSG_COALESCE_NTF:
                continue
            ifindex, name, frames = 0, "?", "-"
            for a, v in attrs(body[4:]):
                if a == ETHTOOL_A_COALESCE_HEADER:
                    for h, hv in attrs(v):
                        if h == ETHTOOL_A_HEADER_DEV_INDEX:
                            ifindex = struct.unpack_from("=I", hv)[0]
                        elif h == ETHTOOL_A_HEADER_DEV_NAME:
                            name = hv.rstrip(b"\0").decode()
                elif a == ETHTOOL_A_COALESCE_RX_MAX_FRAMES:
                    frames = str(struct.unpack_from("=I", v)[0])
            out.write(f"NTF {now:.6f} {ifindex} {name} {frames}\n")
    out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
