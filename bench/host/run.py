#!/usr/bin/env python3
"""bench/host/run.py: every moderation policy measured on this host's kernel.

    bench/host/run.py --build BUILD --out FILE.json [--repeats 3] [--seconds 2]
                      [--rates 2000,5000,10000,20000] [--policies P,...] [--keep-going]

Two network namespaces (dhb-a, dhb-b) joined by a veth pair: dhbb (sender, 10.79.23.2, TSO/GSO
off) sends to dhba (receiver, 10.79.23.1, GRO on: its veth has a NAPI, the one moderated).
Debian's sockperf: a server in dhb-a (CPU 0, SCHED_FIFO), the client in dhb-b on CPU 1, so the
receiver's NAPI polls on CPU 1 (veth schedules it on the sending CPU, and the deferral timer is
pinned there). Per policy and repetition:

  ping-pong  QD=1 round trips (client SCHED_FIFO too): p50/p99/p99.99/max
  under-load at each fixed rate (--rates, a reply to every message): latency percentiles
  throughput 64-byte messages as fast as the client sends: messages the receiver got per s

and for every run the CPU it cost from /proc/stat (system + irq + softirq, per CPU: CPU 1 is the
NAPI's) and the NET_RX softirqs (/proc/softirqs), both per received message.

Policies: none (defer 0, timeout 0), static:IX (net-eqe profile IX as dimctl's napi method
writes it by default: gro-flush-timeout = the profile's usec, defer-hard-irqs 1), set by
dimctl_bench_napi_set, which records the NAPI's values first and writes them back at the end;
dimctl-net-eqe and dimctl-model: the daemon in enforce mode with `method: napi` on dhba (a
config generated per policy, the daemon run inside dhb-a). Policies run interleaved: every
repetition runs each policy once, in a rotated order. The figures are medians over the
repetitions with their min..max; see docs/benchmarks/host.md.
"""
import argparse
import json
import os
import re
import resource
import signal
import subprocess
import sys
import tempfile
import time

NS_A, NS_B = "dhb-a", "dhb-b"
DEV_A, DEV_B = "dhba", "dhbb"
IP_A, IP_B = "10.79.23.1", "10.79.23.2"
PORT = 11111
SERVER_CPU, CLIENT_CPU = 0, 1
MSG = 64
# net-eqe RX profiles (dim/profile.h): index -> usec. dimctl's napi method writes usec as the
# gro-flush-timeout with defer-hard-irqs 1 (0 at usec 0): docs/CONFIG.md "Software profiles".
NET_EQE_USEC = [1, 8, 64, 128, 256]
DEFAULT_POLICIES = "none,static:1,static:2,static:3,dimctl-net-eqe,dimctl-model"


def sh(*args, check=True, **kw):
    return subprocess.run(list(args), check=check, text=True, capture_output=True, **kw)


def in_ns(ns, *args):
    return ["ip", "netns", "exec", ns, *args]


# ---- the veth pair ----------------------------------------------------------------------------

def setup():
    teardown()
    sh("ip", "netns", "add", NS_A)
    sh("ip", "netns", "add", NS_B)
    for ns in (NS_A, NS_B):
        sh(*in_ns(ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1",
                  "net.ipv6.conf.default.disable_ipv6=1"))
        sh(*in_ns(ns, "ip", "link", "set", "lo", "up"))
    sh("ip", "link", "add", DEV_A, "netns", NS_A, "type", "veth", "peer", "name", DEV_B,
       "netns", NS_B)
    sh(*in_ns(NS_A, "ip", "addr", "add", IP_A + "/24", "dev", DEV_A))
    sh(*in_ns(NS_B, "ip", "addr", "add", IP_B + "/24", "dev", DEV_B))
    sh(*in_ns(NS_A, "ethtool", "-K", DEV_A, "gro", "on"))
    sh(*in_ns(NS_B, "ethtool", "-K", DEV_B, "tso", "off", "gso", "off"))
    sh(*in_ns(NS_A, "ip", "link", "set", DEV_A, "up"))
    sh(*in_ns(NS_B, "ip", "link", "set", DEV_B, "up"))
    mac = {}
    for ns, dev in ((NS_A, DEV_A), (NS_B, DEV_B)):
        out = sh(*in_ns(ns, "ip", "link", "show", "dev", dev)).stdout
        mac[dev] = re.search(r"link/ether (\S+)", out).group(1)
    sh(*in_ns(NS_A, "ip", "neigh", "replace", IP_B, "lladdr", mac[DEV_B], "dev", DEV_A, "nud",
              "permanent"))
    sh(*in_ns(NS_B, "ip", "neigh", "replace", IP_A, "lladdr", mac[DEV_A], "dev", DEV_B, "nud",
              "permanent"))


def teardown():
    for ns in (NS_A, NS_B):
        sh("ip", "netns", "del", ns, check=False)


# ---- software moderation: the bench setter and the daemon ------------------------------------

class Napi:
    """dimctl_bench_napi_set in dhb-a: sets every NAPI of dhba, remembers what each held first."""

    def __init__(self, build):
        self.tool = os.path.join(build, "bench/host/dimctl_bench_napi_set")
        self.originals = {}

    def _run(self, *values):
        out = sh(*in_ns(NS_A, self.tool, DEV_A, *map(str, values))).stdout
        rows = [json.loads(line) for line in out.splitlines() if line.strip()]
        for r in rows:
            self.originals.setdefault(r["id"], r["before"])
        return rows

    def read(self):
        return [dict(id=r["id"], **r["before"]) for r in self._run()]

    def set(self, defer, timeout_ns):
        rows = self._run(defer, timeout_ns)
        for r in rows:
            want = {"defer_hard_irqs": defer, "gro_flush_timeout_ns": timeout_ns}
            if r["after"] != want:
                raise RuntimeError(f"napi {r['id']}: wrote {want}, read back {r['after']}")
        return rows

    def restore(self):
        # One NAPI on veth; restore the values it held before the benchmark's first write.
        for _, v in self.originals.items():
            self._run(v["defer_hard_irqs"], v["gro_flush_timeout_ns"])


DAEMON_ALGORITHM = {"dimctl-net-eqe": "net-eqe", "dimctl-model": "model",
                    "dimctl-net-eqe-idle0": "net-eqe", "dimctl-model-idle0": "model"}
# The *-idle0 variants: dimctl's default software profiles except index 0, written as no
# moderation (timeout 0, defer 0) instead of 1 us with one deferral.
IDLE0_PROFILES = """    software_profiles:
      - {gro_flush_timeout: 0us, defer_hard_irqs: 0}
      - {gro_flush_timeout: 8us, defer_hard_irqs: 1}
      - {gro_flush_timeout: 64us, defer_hard_irqs: 1}
      - {gro_flush_timeout: 128us, defer_hard_irqs: 1}
      - {gro_flush_timeout: 256us, defer_hard_irqs: 1}
"""


def daemon_config(path, work, algorithm, port, idle0=False):
    with open(path, "w") as f:
        f.write(f"""# bench/host: dimctl enforcing {algorithm} with software moderation on {DEV_A}
version: 1
mode: shadow
interval: 20ms
state_file: {work}/state.json
metrics:
  listen: 127.0.0.1:{port}
devices:
  - name: hostbench
    match:
      interface: ["{DEV_A}"]
    mode: enforce
    method: napi
    algorithm: {algorithm}
""" + (IDLE0_PROFILES if idle0 else ""))


class Daemon:
    """`dimctl run` inside dhb-a (its netlink sockets, and so napi-set, act there)."""

    def __init__(self, dimctl, work, policy, port):
        self.dimctl = dimctl
        self.cfg = os.path.join(work, f"{policy}.yaml")
        self.log = os.path.join(work, f"{policy}.log")
        os.makedirs(os.path.join(work, policy), exist_ok=True)
        daemon_config(self.cfg, os.path.join(work, policy), DAEMON_ALGORITHM[policy], port,
                      idle0=policy.endswith("-idle0"))
        self.proc = None

    def check(self):
        r = sh(self.dimctl, "check-config", self.cfg, check=False)
        return r.returncode == 0, (r.stdout + r.stderr).strip()

    def start(self):
        self.logf = open(self.log, "w")
        self.proc = subprocess.Popen(in_ns(NS_A, self.dimctl, "run", "--config", self.cfg),
                                     stdout=self.logf, stderr=subprocess.STDOUT)
        time.sleep(1.5)  # BPF programs loaded, the rule matched, the first periods decided
        if self.proc.poll() is not None:
            raise RuntimeError(f"dimctl run exited {self.proc.returncode}: "
                               f"{open(self.log).read()[-600:]}")

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)  # restores what it wrote
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None
        if getattr(self, "logf", None):
            self.logf.close()


# ---- counters ---------------------------------------------------------------------------------

class Probe:
    """dimctl_bench_cpu_probe: cumulative NET_RX softirq time per CPU (BPF, exact) on request."""

    def __init__(self, build):
        # In dhb-a: the NAPI counters are those of dhba (the collector keeps its own netns).
        self.p = subprocess.Popen(in_ns(NS_A, os.path.join(build, "bench/host/dimctl_bench_cpu_probe"),
                                        DEV_A),
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        if json.loads(self._line() or "{}").get("ready") is not True:
            raise RuntimeError("dimctl_bench_cpu_probe did not start")

    def _line(self):
        while True:  # the collector may log a line of its own first
            line = self.p.stdout.readline()
            if not line or line.startswith("{"):
                return line

    def sample(self):
        self.p.stdin.write("\n")
        self.p.stdin.flush()
        return json.loads(self._line())

    def close(self):
        self.p.stdin.close()
        self.p.wait()


def cpu_times():
    """/proc/stat per CPU: system, irq, softirq and idle (with iowait) in USER_HZ ticks."""
    out = {}
    with open("/proc/stat") as f:
        for line in f:
            m = re.match(r"cpu(\d+) (.*)", line)
            if m:
                v = [int(x) for x in m.group(2).split()]
                out[int(m.group(1))] = {"system": v[2], "irq": v[5], "softirq": v[6],
                                        "idle": v[3] + v[4]}
    return out


def proc_ticks(pid):
    """utime + stime of a process, and its stime, in USER_HZ ticks (0, 0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            v = f.read().rsplit(")", 1)[1].split()
        return int(v[11]) + int(v[12]), int(v[12])
    except OSError:
        return 0, 0


class Meter:
    """Every counter a run's cost is read from, sampled at its start and its end."""

    def __init__(self, probe, server_pid, napi):
        self.probe = probe
        self.napi = napi
        self.server_pid = server_pid
        self.daemon_pid = None

    def udp_in(self):
        # The server's /proc/PID/net is dhb-a's: no process to start for it.
        with open(f"/proc/{self.server_pid}/net/snmp") as f:
            rows = [line.split() for line in f if line.startswith("Udp:")]
        d = dict(zip(rows[0][1:], map(int, rows[1][1:])))
        return d["InDatagrams"], d["RcvbufErrors"]

    def sample(self):
        return {"t": time.monotonic(), "stat": cpu_times(), "bpf": self.probe.sample(),
                "udp": self.udp_in(), "server": proc_ticks(self.server_pid)[1],
                "daemon": proc_ticks(self.daemon_pid)[0] if self.daemon_pid else 0,
                "children": resource.getrusage(resource.RUSAGE_CHILDREN).ru_stime}

    @staticmethod
    def delta(a, b):
        """Run cost between samples a and b, per message the receiver got."""
        hz = os.sysconf("SC_CLK_TCK")
        received = b["udp"][0] - a["udp"][0]
        n = max(received, 1)
        net_rx_ns = [y["net_rx_ns"] - x["net_rx_ns"]
                     for x, y in zip(a["bpf"]["cpus"], b["bpf"]["cpus"])]
        net_rx = [y["net_rx"] - x["net_rx"] for x, y in zip(a["bpf"]["cpus"], b["bpf"]["cpus"])]
        napi = {k: b["bpf"]["napi"][k] - a["bpf"]["napi"][k] for k in b["bpf"]["napi"]}
        stat = {c: {k: (b["stat"][c][k] - a["stat"][c][k]) / hz for k in b["stat"][c]}
                for c in b["stat"]}
        sys_s = (b["children"] - a["children"]) + (b["server"] - a["server"]) / hz
        daemon_s = (b["daemon"] - a["daemon"]) / hz
        return {
            "seconds": b["t"] - a["t"],
            "received": received,
            "rcvbuf_errors": b["udp"][1] - a["udp"][1],
            # NET_RX softirq time on every CPU (both directions of the pair), exact (BPF).
            "net_rx_us_per_msg": sum(net_rx_ns) / 1e3 / n,
            "net_rx_per_msg": sum(net_rx) / n,
            "net_rx_ns_by_cpu": net_rx_ns,
            # The moderated NAPI's polls (napi.bpf.c): all, and those that found nothing.
            "napi": napi,
            "polls_per_msg": napi["polls"] / n,
            "empty_polls_per_msg": napi["empty_polls"] / n,
            # System time of the sockperf client and server (their sends, receives, wakeups).
            "sockperf_sys_us_per_msg": sys_s * 1e6 / n,
            # The daemon's own CPU (user + system; 0 without one).
            "daemon_us_per_msg": daemon_s * 1e6 / n,
            "cpu_us_per_msg": (sum(net_rx_ns) / 1e9 + sys_s + daemon_s) * 1e6 / n,
            # /proc/stat system + irq + softirq of the NAPI's core: tick-sampled, and counts
            # whatever else runs there (other builds on a shared box).
            "stat_napi_core_us_per_msg": sum(stat[CLIENT_CPU][k] for k in ("system", "irq",
                                                                           "softirq")) * 1e6 / n,
            "stat_by_cpu": stat,
        }


# ---- sockperf ---------------------------------------------------------------------------------

PCT = re.compile(r"---> (?:percentile (\d+\.\d+)|<(MAX|MIN)> observation) = +([\d.]+)")


def parse_sockperf(out):
    r = {"percentiles": {}}
    for m in PCT.finditer(out):
        key = m.group(1) or m.group(2).lower()
        r["percentiles"][key] = float(m.group(3))
    m = re.search(r"\[Valid Duration\] RunTime=([\d.]+) sec; SentMessages=(\d+); "
                  r"ReceivedMessages=(\d+)", out)
    if m:
        r["valid_s"], r["sent"], r["replies"] = float(m.group(1)), int(m.group(2)), int(m.group(3))
    m = re.search(r"Total (\d+) observations", out)
    if m:
        r["observations"] = int(m.group(1))
    m = re.search(r"# dropped messages = (\d+)", out)
    if m:
        r["dropped"] = int(m.group(1))
    m = re.search(r"\[Total Run\] RunTime=([\d.]+) sec", out)
    if m:
        r["total_run_s"] = float(m.group(1))
    m = re.search(r"Message Rate is (\d+)", out)
    if m:
        r["send_rate"] = int(m.group(1))
    return r


def client(meter, mode, seconds, extra=(), fifo=False):
    cmd = ["taskset", "-c", str(CLIENT_CPU), "sockperf", mode, "-i", IP_A, "-p", str(PORT),
           "-t", str(seconds), "-m", str(MSG), *extra]
    if fifo:
        cmd = ["chrt", "-f", "20", *cmd]
    start = meter.sample()
    p = subprocess.run(in_ns(NS_B, *cmd), text=True, capture_output=True,
                       timeout=seconds + 30)
    end = meter.sample()
    r = parse_sockperf(p.stdout + p.stderr)
    if p.returncode != 0 or (mode != "throughput" and not r["percentiles"]):
        raise RuntimeError(f"sockperf {mode} failed ({p.returncode}): "
                           f"{(p.stdout + p.stderr)[-400:]}")
    r.update(Meter.delta(start, end))
    # What the NAPI held when the run ended (for the daemon: the profile it had chosen).
    r["napi_config"] = meter.napi.read()
    if mode == "throughput":
        # What the receiver took in over the client's whole run (its warm-up included).
        r["received_per_s"] = r["received"] / r.get("total_run_s", seconds)
    return r


def run_policy_tests(a, meter):
    out = {}
    # QD=1: a blocking single-threaded client, SCHED_FIFO like the server, so the other load on
    # the box delays it less. The under-load client's sender spins: at SCHED_FIFO it would starve
    # its own receiver thread on the same CPU, so it runs at normal priority.
    out["pingpong"] = client(meter, "ping-pong", a.seconds, ["--full-rtt"], fifo=True)
    out["underload"] = {}
    for rate in a.rates:
        out["underload"][str(rate)] = client(
            meter, "under-load", a.seconds, ["--full-rtt", "--mps", str(rate), "--reply-every", "1"])
    out["throughput"] = client(meter, "throughput", a.seconds)
    return out


# ---- the run ------------------------------------------------------------------------------------

def apply(policy, napi, daemons, meter):
    """Starts a policy; returns a function that ends it."""
    if policy == "none":
        napi.set(0, 0)
        return lambda: None
    m = re.fullmatch(r"static:(\d)", policy)
    if m:
        usec = NET_EQE_USEC[int(m.group(1))]
        napi.set(1, usec * 1000)
        return lambda: napi.set(0, 0)
    d = daemons[policy]
    napi.set(0, 0)
    d.start()
    meter.daemon_pid = d.proc.pid

    def stop():
        meter.daemon_pid = None
        d.stop()
    return stop


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--out", required=True)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=2, help="per sockperf run (default 2)")
    ap.add_argument("--rates", default="2000,5000,10000,20000")
    ap.add_argument("--policies", default=DEFAULT_POLICIES)
    ap.add_argument("--dimctl", help="the dimctl the daemon policies run (default: BUILD's)")
    a = ap.parse_args()
    a.rates = [int(x) for x in a.rates.split(",")]
    policies = a.policies.split(",")
    if os.geteuid() != 0:
        sys.exit("bench/host/run.py: needs root (network namespaces, napi-set, BPF)")
    if os.cpu_count() < 2:
        sys.exit("bench/host/run.py: needs two CPUs (server and client pinned apart)")

    work = tempfile.mkdtemp(prefix="dimctl-bench-host.")
    result = {"host": os.uname().release, "started": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                                      time.gmtime()),
              "repeats": a.repeats, "seconds": a.seconds, "rates": a.rates, "msg_bytes": MSG,
              "policies": policies, "skipped": {}, "runs": [],
              "loadavg_start": open("/proc/loadavg").read().split()[:3],
              "commit": sh("git", "describe", "--always", "--dirty", check=False).stdout.strip(),
              "daemon_dimctl": a.dimctl or "the build's"}
    server = None
    probe = None
    napi = Napi(a.build)
    daemons = {}
    stop = lambda: None  # noqa: E731
    try:
        setup()
        napi.read()
        for i, p in enumerate(pol for pol in policies if pol in DAEMON_ALGORITHM):
            daemons[p] = Daemon(a.dimctl or os.path.join(a.build, "userspace/cli/dimctl"), work,
                                p, 19977 + i)
            ok, msg = daemons[p].check()
            if not ok:
                result["skipped"][p] = msg
                print(f"bench/host: {p} skipped: its config is refused by this dimctl "
                      f"(method: napi not landed?):\n  {msg[:300]}", file=sys.stderr)
        policies = [p for p in policies if p not in result["skipped"]]
        probe = Probe(a.build)
        server = subprocess.Popen(
            in_ns(NS_A, "chrt", "-f", "20", "taskset", "-c", str(SERVER_CPU), "sockperf",
                  "server", "-i", IP_A, "-p", str(PORT)),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.5)
        meter = Meter(probe, server.pid, napi)
        t0 = time.monotonic()
        for rep in range(a.repeats):
            order = policies[rep % len(policies):] + policies[:rep % len(policies)]
            for policy in order:
                t = time.monotonic()
                stop = apply(policy, napi, daemons, meter)
                try:
                    napi_during = napi.read()
                    tests = run_policy_tests(a, meter)
                    tests["napi_after"] = napi.read()
                finally:
                    stop()
                    stop = lambda: None  # noqa: E731
                tests["napi_during_start"] = napi_during
                if policy in DAEMON_ALGORITHM:
                    # What the daemon wrote, as read back after each run: a daemon that wrote
                    # nothing measures `none` plus its own CPU, and must not pass for a policy.
                    seen = {(c["defer_hard_irqs"], c["gro_flush_timeout_ns"])
                            for t in [tests["pingpong"], tests["throughput"],
                                      *tests["underload"].values()] for c in t["napi_config"]}
                    tests["daemon_profiles"] = sorted(seen)
                    if seen == {(0, 0)}:
                        print(f"bench/host: WARNING: {policy}: the daemon wrote nothing to the "
                              f"NAPI (see {daemons[policy].log})", file=sys.stderr)
                result["runs"].append({"policy": policy, "repeat": rep, **tests})
                pp = tests["pingpong"]["percentiles"]
                print(f"bench/host: rep {rep} {policy:15} pp p50 {pp.get('50.000', 0):8.1f} us  "
                      f"p99 {pp.get('99.000', 0):8.1f}  tput "
                      f"{tests['throughput']['received_per_s']:9.0f}/s  "
                      f"({time.monotonic() - t:.0f}s)", flush=True)
        result["elapsed_s"] = time.monotonic() - t0
    finally:
        stop()
        for d in daemons.values():
            d.stop()
        if server:
            server.terminate()
            server.wait()
        if probe:
            probe.close()
        try:
            napi.restore()
        except Exception as e:  # the namespace goes away next; say what could not be restored
            print(f"bench/host: restoring the NAPI's values: {e}", file=sys.stderr)
        teardown()
        result["loadavg_end"] = open("/proc/loadavg").read().split()[:3]
        with open(a.out, "w") as f:
            json.dump(result, f, indent=1)
        print(f"bench/host: wrote {a.out}; daemon logs and configs in {work}")


if __name__ == "__main__":
    main()
