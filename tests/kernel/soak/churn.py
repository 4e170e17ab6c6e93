#!/usr/bin/python3
"""The soak's churn: devices, queues, names, traffic, config reloads and a second writer.

Runs in the caller's (root) namespace and acts only inside two named network namespaces: NS,
where dimctl runs, and PEER, where the veth senders live. Every tick (about 0.25 s) one random
action, from a seeded generator (the seed is logged, so a failing run can be repeated):

  tap-create   a tap under a temporary unnamed name, its rx-frames set to a fresh "original"
               value, then renamed into the allowlist (sa-t*: an enforce rule, static profile),
               to a name a shadow rule names (ss-t*: a static profile it wants, never written)
               or to a name no rule names (sx-t*)
               (or, now and then, into the name of an allowlisted tap deleted lately: a new
               device under an old name)
  tap-delete, tap-rename (allowlisted <-> not, or within one class)
  veth-create  a veth pair: receiver (sa-v* or sx-v*, 4 queues, GRO on) in NS, sender (TSO/GSO
               off) in PEER, and a bounded UDP sender to the receiver's address only
  veth-delete, veth-rename, veth-channels (ethtool -L: queues appear and disappear),
  veth-flap    (down/up: the NAPIs go and come back)
and on their own clocks:
  reload       every RELOAD_S: the tap rule's static profile flips, SIGHUP; the daemon then wants
               to write every allowlisted tap again
  drift        every DRIFT_S (tried every second until a tap qualifies): `ethtool -C` on an
               allowlisted tap that holds the daemon's value and has been left alone for SETTLE_S
               (no rename, create or reload): another writer behind the daemon's back. From then
               on the daemon must not write that device; it is neither deleted nor renamed until
               the next reload has had SETTLE_S to (not) write it.

The soak writes coalescing only at tap creation (under its temporary name) and for drift, with
values the daemon never writes (ORIGINALS, FOREIGN vs PROFILE_PKTS), and logs each write with
its ifindex: check.py attributes every kernel notification with this log.

Output: JSON lines in LOG ({"t": monotonic seconds, "op": ..., ...}) and, at the end, one line
per device still in NS in FINAL: {"ifindex", "name", "kind", "expected", "drifted"}, where
expected is the last value the soak wrote (the device's original, or the other writer's).

usage: churn.py config IX STATE_FILE PORT              (prints the daemon config)
       churn.py run NS PEER SECONDS SEED CONFIG DAEMON_PID STATE_FILE PORT LOG FINAL
"""
import fnmatch
import json
import os
import random
import signal
import subprocess
import sys
import time

# The allowlist: the enforce rules of the config below name exactly these. SHADOW_TAP is named
# by a shadow rule: a static profile the daemon wants but must not write. "sx-*" no rule names.
ALLOW_TAP = "sa-t*"
ALLOW_VETH = "sa-v*"
SHADOW_TAP = "ss-t*"
SHADOW_IX = 2  # 28 frames
# The tap rule's custom RX table: tun has rx-frames only (no usecs), clamps above 64.
PROFILE_PKTS = [20, 24, 28, 40, 44]
RELOAD_IX = (3, 4)  # the static profile flips between these: 40 and 44 frames
ORIGINALS = range(1, 16)  # tap originals (set at creation)
FOREIGN = range(48, 64)  # the other writer's values
TICK_S = 0.25
RELOAD_S = 6.0
DRIFT_S = 9.0
SETTLE_S = 3.0
MAX_TAPS, MIN_TAPS = 12, 3
MAX_VETH = 3
VETH_QUEUES = 4


def config_text(ix, state_file, port):
    profile = ", ".join(f"{{usec: 0, pkts: {p}}}" for p in PROFILE_PKTS)
    # soak_test.sh sets napi where the kernel has netdev napi-set: the allowlisted veths' NAPIs
    # are then written under the churn (flaps and channel changes replace them).
    veth_method = os.environ.get("SOAK_VETH_METHOD", "ethtool")
    return f"""# written by tests/kernel/soak/churn.py
mode: enforce
interval: 20ms
state_file: {state_file}
metrics:
  listen: 127.0.0.1:{port}
devices:
  - name: soak-tap
    match:
      interface: ["{ALLOW_TAP}"]
    mode: enforce
    algorithm: static:{ix}
    rx_profile: [{profile}]
    rate_limit: 10ms
  - name: soak-veth
    match:
      interface: ["{ALLOW_VETH}"]
    mode: enforce
    method: {veth_method}
    algorithm: net-eqe
    rate_limit: 10ms
  - name: soak-shadow
    match:
      interface: ["{SHADOW_TAP}"]
    mode: shadow
    algorithm: static:{SHADOW_IX}
    rx_profile: [{profile}]
"""


def allowlisted(name):
    return fnmatch.fnmatchcase(name, ALLOW_TAP) or fnmatch.fnmatchcase(name, ALLOW_VETH)


# A bounded UDP sender, run in PEER: several source ports spread the datagrams over the sender's
# TX queues (so the receiver's RX queues), in bursts and pauses so DIM sees the load change. It
# stops at its deadline or when the device goes away.
SENDER = r"""
import socket, sys, time
dst, src, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
socks = []
for i in range(8):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((src, 42000 + i))
    socks.append(s)
end = time.monotonic() + seconds
payload = b"dimctl soak" * 4
n = 0
try:
    while time.monotonic() < end:
        for _ in range(2000):
            socks[n % 8].sendto(payload, (dst, 9))
            n += 1
            if n % 32 == 0:
                time.sleep(0.0003)
        time.sleep(0.3 if (n // 2000) % 3 else 1.0)
except OSError:
    pass
"""


class Churn:
    def __init__(self, args):
        (self.ns, self.peer, seconds, seed, self.config, pid, self.state_file, self.port,
         log, final) = args
        self.seconds = float(seconds)
        self.seed = int(seed)
        self.daemon_pid = int(pid)
        self.rng = random.Random(self.seed)
        self.log_f = open(log, "w", buffering=1)
        self.final_path = final
        self.devs = {}  # ifindex -> dict(kind, name, expected, drifted, changed, k)
        self.senders = {}  # ifindex of a veth receiver -> Popen
        self.next_id = 0
        self.deleted = []  # names of allowlisted taps deleted lately, for re-use
        self.static_ix = RELOAD_IX[0]
        self.last_reload = 0.0
        self.last_drift = 0.0
        self.drift_tried = 0.0
        self.counts = {}

    # -- helpers
    def log(self, op, **kw):
        kw = {"t": round(time.monotonic(), 6), "op": op, **kw}
        self.log_f.write(json.dumps(kw) + "\n")
        self.counts[op] = self.counts.get(op, 0) + 1

    def sh(self, *cmd, ns=None, check=True):
        full = (["ip", "netns", "exec", ns] if ns else []) + list(cmd)
        r = subprocess.run(full, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if check and r.returncode != 0:
            raise RuntimeError(f"{' '.join(full)}: exit {r.returncode}: {r.stderr.strip()}")
        return r

    def ifindex(self, name):
        out = self.sh("ip", "-j", "link", "show", "dev", name, ns=self.ns).stdout
        return json.loads(out)[0]["ifindex"]

    def fresh(self):
        """A new id, base 36: names stay within 15 characters however long the soak runs."""
        self.next_id += 1
        n, digits = self.next_id, ""
        while n:
            n, r = divmod(n, 36)
            digits = "0123456789abcdefghijklmnopqrstuvwxyz"[r] + digits
        return digits

    def rx_frames(self, name):
        r = self.sh("ethtool", "-c", name, ns=self.ns, check=False)
        for line in r.stdout.splitlines():
            if line.startswith("rx-frames:"):
                v = line.split(":", 1)[1].strip()
                return int(v) if v.isdigit() else None
        return None

    def write(self, dev_ifindex, value, why):
        d = self.devs[dev_ifindex]
        t0 = time.monotonic()
        self.sh("ethtool", "-C", d["name"], "rx-frames", str(value), ns=self.ns)
        d["expected"] = value
        self.log("write", ifindex=dev_ifindex, name=d["name"], value=value, why=why,
                 t0=round(t0, 6))

    def pick(self, kind):
        """A device to delete or rename: not one that just drifted, until a reload has shown
        that the daemon leaves it alone."""
        now = time.monotonic()
        c = [i for i, d in self.devs.items()
             if d["kind"] == kind and d.get("protected_until", 0) <= now]
        return self.rng.choice(c) if c else None

    def rename(self, ifindex, cls, new=None):
        d = self.devs[ifindex]
        if d["kind"] == "veth" and cls == "ss":
            cls = "sx"
        kind = "t" if d["kind"] == "tap" else "v"
        new = new or f"{cls}-{kind}{d['k']}r{self.fresh()}"
        was_up = d["kind"] == "veth"
        if was_up:  # a running device cannot be renamed
            self.sh("ip", "link", "set", d["name"], "down", ns=self.ns)
        self.sh("ip", "link", "set", d["name"], "name", new, ns=self.ns)
        if was_up:
            self.sh("ip", "link", "set", new, "up", ns=self.ns)
        self.log("rename", ifindex=ifindex, old=d["name"], name=new, kind=d["kind"],
                 allowlisted=allowlisted(new), drifted=d["drifted"])
        d["name"] = new
        d["changed"] = time.monotonic()

    # -- actions
    def tap_create(self):
        if sum(d["kind"] == "tap" for d in self.devs.values()) >= MAX_TAPS:
            return self.tap_delete()
        k = self.fresh()
        tmp = f"sx-n{k}"
        self.sh("ip", "tuntap", "add", "dev", tmp, "mode", "tap", ns=self.ns)
        i = self.ifindex(tmp)
        self.devs[i] = {"kind": "tap", "name": tmp, "expected": 0, "drifted": False,
                        "changed": time.monotonic(), "k": k}
        self.log("create", ifindex=i, name=tmp, kind="tap")
        self.write(i, self.rng.choice(ORIGINALS), "original")
        in_use = {d["name"] for d in self.devs.values()}
        reusable = [n for n in self.deleted if n not in in_use]
        if reusable and self.rng.random() < 0.3:
            # A new device under the name of one the daemon wrote and that was deleted (a VM's
            # tap re-created): it has its own original, not the old device's.
            self.rename(i, "sa", new=self.rng.choice(reusable))
        else:
            self.rename(i, self.rng.choices(["sa", "ss", "sx"], weights=[6, 2, 2])[0])

    def tap_delete(self):
        if sum(d["kind"] == "tap" for d in self.devs.values()) <= MIN_TAPS:
            return self.tap_create()
        i = self.pick("tap")
        if i is None:
            return
        name = self.devs[i]["name"]
        self.sh("ip", "link", "del", name, ns=self.ns)
        self.log("delete", ifindex=i, name=name, kind="tap")
        del self.devs[i]
        if fnmatch.fnmatchcase(name, ALLOW_TAP):
            self.deleted = (self.deleted + [name])[-8:]

    def tap_rename(self):
        i = self.pick("tap")
        if i is not None:
            self.rename(i, self.rng.choices(["sa", "ss", "sx"], weights=[5, 2, 3])[0])

    def veth_create(self):
        if sum(d["kind"] == "veth" for d in self.devs.values()) >= MAX_VETH:
            return self.veth_delete()
        k = self.fresh()
        used = {d["net"] for d in self.devs.values() if d["kind"] == "veth"}
        net = next(f"10.214.{n}" for n in range(1, 251) if f"10.214.{n}" not in used)
        name = f"{'sa' if self.rng.random() < 0.6 else 'sx'}-v{k}"
        peer = f"sp{k}"
        q = str(VETH_QUEUES)
        self.sh("ip", "link", "add", name, "numrxqueues", q, "numtxqueues", q, "type", "veth",
                "peer", "name", peer, "numrxqueues", q, "numtxqueues", q, "netns", self.peer,
                ns=self.ns)
        self.sh("ip", "addr", "add", f"{net}.1/24", "dev", name, ns=self.ns)
        self.sh("ip", "addr", "add", f"{net}.2/24", "dev", peer, ns=self.peer)
        self.sh("ethtool", "-K", name, "gro", "on", ns=self.ns)
        self.sh("ethtool", "-K", peer, "tso", "off", "gso", "off", ns=self.peer, check=False)
        self.sh("ethtool", "-L", name, "rx", q, "tx", q, ns=self.ns)
        self.sh("ethtool", "-L", peer, "rx", q, "tx", q, ns=self.peer)
        self.sh("ip", "link", "set", name, "up", ns=self.ns)
        self.sh("ip", "link", "set", peer, "up", ns=self.peer)
        i = self.ifindex(name)
        self.devs[i] = {"kind": "veth", "name": name, "expected": None, "drifted": False,
                        "changed": time.monotonic(), "k": k, "net": net}
        self.log("create", ifindex=i, name=name, kind="veth", allowlisted=allowlisted(name))

    def veth_delete(self):
        i = self.pick("veth")
        if i is None:
            return self.veth_create()
        self.stop_sender(i)
        self.sh("ip", "link", "del", self.devs[i]["name"], ns=self.ns)
        self.log("delete", ifindex=i, name=self.devs[i]["name"], kind="veth")
        del self.devs[i]

    def veth_rename(self):
        i = self.pick("veth")
        if i is not None:
            self.rename(i, self.rng.choices(["sa", "ss", "sx"], weights=[5, 2, 3])[0])

    def veth_channels(self):
        i = self.pick("veth")
        if i is None:
            return
        n = str(self.rng.randint(1, VETH_QUEUES))
        self.sh("ethtool", "-L", self.devs[i]["name"], "rx", n, "tx", n, ns=self.ns)
        self.log("channels", ifindex=i, name=self.devs[i]["name"], queues=int(n))

    def veth_flap(self):
        i = self.pick("veth")
        if i is None:
            return
        name = self.devs[i]["name"]
        self.sh("ip", "link", "set", name, "down", ns=self.ns)
        time.sleep(0.05)
        self.sh("ip", "link", "set", name, "up", ns=self.ns)
        self.log("flap", ifindex=i, name=name)

    def feed_traffic(self):
        """Keeps one bounded sender per veth pair running."""
        for i, d in self.devs.items():
            if d["kind"] != "veth":
                continue
            p = self.senders.get(i)
            if p is None or p.poll() is not None:
                self.senders[i] = subprocess.Popen(
                    ["ip", "netns", "exec", self.peer, "/usr/bin/python3", "-c", SENDER,
                     f"{d['net']}.1", f"{d['net']}.2", str(self.rng.uniform(2, 6))],
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def stop_sender(self, i):
        p = self.senders.pop(i, None)
        if p is not None and p.poll() is None:
            p.terminate()
            p.wait()

    def reload(self):
        self.static_ix = RELOAD_IX[1] if self.static_ix == RELOAD_IX[0] else RELOAD_IX[0]
        tmp = self.config + ".tmp"
        with open(tmp, "w") as f:
            f.write(config_text(self.static_ix, self.state_file, self.port))
        os.replace(tmp, self.config)
        try:
            os.kill(self.daemon_pid, signal.SIGHUP)
        except ProcessLookupError as e:  # the daemon died: soak_test.sh reports it
            raise RuntimeError(f"SIGHUP to {self.daemon_pid}: {e}") from e
        self.last_reload = time.monotonic()
        drifted = sorted(d["name"] for d in self.devs.values() if d["drifted"])
        self.log("reload", static_ix=self.static_ix, pkts=PROFILE_PKTS[self.static_ix],
                 drifted_present=drifted)

    def drift(self):
        """Another writer on a settled allowlisted tap that holds the daemon's value. Returns
        whether it wrote; without a candidate it is tried again a second later."""
        now = time.monotonic()
        self.drift_tried = now
        if now - self.last_reload < SETTLE_S:
            return False
        want = PROFILE_PKTS[self.static_ix]
        cands = [i for i, d in self.devs.items()
                 if d["kind"] == "tap" and not d["drifted"] and
                 fnmatch.fnmatchcase(d["name"], ALLOW_TAP) and now - d["changed"] >= SETTLE_S]
        self.rng.shuffle(cands)
        for i in cands:
            if self.rx_frames(self.devs[i]["name"]) == want:
                value = self.rng.choice([v for v in FOREIGN if v != want])
                self.devs[i]["drifted"] = True
                # Kept as it is until the next reload (which makes the daemon want to write it)
                # is SETTLE_S old: the drift check always has something to catch.
                self.devs[i]["protected_until"] = self.last_reload + RELOAD_S + SETTLE_S
                self.write(i, value, "foreign")
                self.last_drift = now
                return True
        return False

    def step(self):
        now = time.monotonic()
        if now - self.last_reload >= RELOAD_S:
            return self.reload()
        if now - self.last_drift >= DRIFT_S and now - self.drift_tried >= 1 and self.drift():
            return
        action = self.rng.choices(
            [self.tap_create, self.tap_delete, self.tap_rename, self.veth_create,
             self.veth_delete, self.veth_rename, self.veth_channels, self.veth_flap],
            weights=[4, 3, 4, 1, 1, 1, 3, 1])[0]
        action()

    def run(self):
        self.log("start", seed=self.seed, seconds=self.seconds, profile_pkts=PROFILE_PKTS)
        start = time.monotonic()
        self.last_reload = self.last_drift = start
        stop = []  # SIGTERM (the daemon died): end early, still write FINAL
        signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
        for _ in range(MIN_TAPS + 2):
            self.tap_create()
        self.veth_create()
        while time.monotonic() - start < self.seconds and not stop:
            self.feed_traffic()
            try:
                self.step()
            except RuntimeError as e:  # a failed command is logged; the soak goes on
                self.log("error", error=str(e))
            time.sleep(TICK_S)
        for i in list(self.senders):
            self.stop_sender(i)
        self.log("end", counts=self.counts)
        present = {d["ifindex"] for d in json.loads(
            self.sh("ip", "-j", "link", "show", ns=self.ns).stdout)}
        with open(self.final_path, "w") as f:
            for i, d in sorted(self.devs.items()):
                if i in present:
                    f.write(json.dumps({"ifindex": i, "name": d["name"], "kind": d["kind"],
                                        "expected": d["expected"], "drifted": d["drifted"]}) + "\n")
        return 0


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "config":
        sys.stdout.write(config_text(int(sys.argv[2]), sys.argv[3], sys.argv[4]))
        return 0
    if len(sys.argv) == 12 and sys.argv[1] == "run":
        return Churn(sys.argv[2:]).run()
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
