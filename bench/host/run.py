#!/usr/bin/env python3
"""bench/host/run.py: every moderation policy measured on this host's kernel.

    bench/host/run.py --build BUILD --out FILE.json [--repeats 5] [--seconds 2]
                      [--rates 2000,5000,10000,20000,50000] [--policies P,...]
    bench/host/run.py --sim-policies P,...   (the `dimctl sim` names of P, see below)

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

Policies: none (defer 0, timeout 0), static-Nus (gro-flush-timeout N us, defer-hard-irqs 1),
set by dimctl_bench_napi_set, which records the NAPI's values first and writes them back at the
end; dimctl-net-eqe, dimctl-model (objective latency, the default) and dimctl-model-effB
(objective efficiency, latency_budget B us): the daemon in enforce mode with `method: napi` on
dhba (a config generated per policy, the daemon run inside dhb-a, no profile bounds). For the
daemon policies the daemon's own counters (its metrics endpoint, in dhb-a) are read before and
after every run: the writes it made (dimctl_apply_total, result ok) and its profile changes.
Policies run interleaved: every repetition runs each policy once, in a rotated order. The
figures are medians over the repetitions with their min..max; see docs/benchmarks/host.md.
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
import threading
import time

NS_A, NS_B = "dhb-a", "dhb-b"
DEV_A, DEV_B = "dhba", "dhbb"
IP_A, IP_B = "10.79.23.1", "10.79.23.2"
PORT = 11111
SERVER_CPU, CLIENT_CPU = 0, 1
MSG = 64
# Fixed software moderation: gro-flush-timeout N us with defer-hard-irqs 1. (Named by the timeout,
# not by a profile index: the software profile table behind an index is the daemon's to change.)
STATIC = re.compile(r"static-(\d+)us")
# The cost model under the efficiency objective with a latency budget of B us.
EFFICIENCY = re.compile(r"dimctl-model-eff(\d+)")
DEFAULT_POLICIES = ("none,static-16us,static-32us,static-64us,static-128us,static-256us,"
                    "dimctl-net-eqe,dimctl-model,dimctl-model-eff25,dimctl-model-eff50,"
                    "dimctl-model-eff100")
# dimctl sim's static:IX are indexes into the software table of bench/sim/workloads/h*-napi-*.yaml
# (defer 1): the host's static-Nus whose timeout is at one index in the old table (1, 8, 64, 128,
# 256 us) and in the new one (none, 16, 64, 128, 256 us).
SIM_STATIC_IX = {64: 2, 128: 3, 256: 4}


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


def daemon_algorithm(policy):
    """(algorithm, efficiency budget in us or None) of a daemon policy, None for the others."""
    if policy in DAEMON_ALGORITHM:
        return DAEMON_ALGORITHM[policy], None
    m = EFFICIENCY.fullmatch(policy)
    return ("model", int(m.group(1))) if m else None


def is_daemon(policy):
    return daemon_algorithm(policy) is not None


def check_policy(policy):
    """Why run.py cannot run a policy name, or None."""
    if policy == "none" or STATIC.fullmatch(policy) or is_daemon(policy):
        return None
    if re.fullmatch(r"static:\d", policy):
        return (f"{policy}: a profile index names no timeout (the software table changes); "
                f"name the timeout, e.g. static-64us")
    return f"{policy}: unknown (none, static-Nus, dimctl-net-eqe, dimctl-model, dimctl-model-effB)"


def sim_policy(policy):
    """(the `dimctl sim` name of a host policy, None) or (None, why it has none)."""
    if policy in ("none", "dimctl-net-eqe", "dimctl-model"):
        return policy, None
    m = STATIC.fullmatch(policy)
    if m:
        ix = SIM_STATIC_IX.get(int(m.group(1)))
        if ix is not None:
            return f"static:{ix}", None
        return None, (f"the simulator's static:IX maps only "
                      f"{', '.join(f'{u} us' for u in SIM_STATIC_IX)} to one index")
    if EFFICIENCY.fullmatch(policy):
        return None, "dimctl sim has no efficiency objective"
    return None, "no simulator policy of that name"
# The *-idle0 variants: dimctl's default software profiles except index 0, written as no
# moderation (timeout 0, defer 0) instead of 1 us with one deferral.
IDLE0_PROFILES = """    software_profiles:
      - {gro_flush_timeout: 0us, defer_hard_irqs: 0}
      - {gro_flush_timeout: 8us, defer_hard_irqs: 1}
      - {gro_flush_timeout: 64us, defer_hard_irqs: 1}
      - {gro_flush_timeout: 128us, defer_hard_irqs: 1}
      - {gro_flush_timeout: 256us, defer_hard_irqs: 1}
"""


def daemon_config(path, work, algorithm, port, idle0=False, budget_us=None):
    # No `profiles:` bounds: the policy picks from the whole table, index 0 included.
    model = (f"""    model:
      objective: efficiency
      latency_budget: {budget_us}us
""" if budget_us is not None else "")
    # Net DIM compares byte rates first and veth has no qstats: without the byte program it
    # would park at index 0 (docs/CONTROLLER.md). The model reads packets only.
    collectors = (f"""collectors:
  skb_bytes: ["{DEV_A}"]
""" if algorithm.startswith("net-") else "")
    with open(path, "w") as f:
        f.write(f"""# bench/host: dimctl enforcing {algorithm} with software moderation on {DEV_A}
version: 1
mode: shadow
interval: 20ms
state_file: {work}/state.json
metrics:
  listen: 127.0.0.1:{port}
""" + collectors + f"""devices:
  - name: hostbench
    match:
      interface: ["{DEV_A}"]
    mode: enforce
    method: napi
    algorithm: {algorithm}
""" + model + (IDLE0_PROFILES if idle0 else ""))


class Daemon:
    """`dimctl run` inside dhb-a (its netlink sockets, and so napi-set, act there)."""

    def __init__(self, dimctl, work, policy, port):
        self.dimctl = dimctl
        self.cfg = os.path.join(work, f"{policy}.yaml")
        self.log = os.path.join(work, f"{policy}.log")
        os.makedirs(os.path.join(work, policy), exist_ok=True)
        algorithm, budget = daemon_algorithm(policy)
        daemon_config(self.cfg, os.path.join(work, policy), algorithm, port,
                      idle0=policy.endswith("-idle0"), budget_us=budget)
        self.port = port
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

    def counters(self):
        """The daemon's own counters for dhba from its metrics endpoint (in dhb-a): writes it
        made (dimctl_apply_total, result ok) and profile changes (dimctl_dim_profile_changes_total,
        summed over the device's queues), with the time read; None when it cannot be read."""
        r = sh(*in_ns(NS_A, "curl", "-sf", "--max-time", "2",
                      f"http://127.0.0.1:{self.port}/metrics"), check=False)
        t = time.monotonic()
        if r.returncode != 0:
            return None
        out = {"t": t, "apply": {}, "profile_changes": 0}
        for line in r.stdout.splitlines():
            m = re.match(r"(\w+)\{([^}]*)\} (\S+)$", line)
            if not m or f'device="{DEV_A}"' not in m.group(2):
                continue
            name, labels, v = m.group(1), m.group(2), float(m.group(3))
            if name == "dimctl_apply_total":
                result = re.search(r'result="([^"]*)"', labels)
                key = result.group(1) if result else "?"
                out["apply"][key] = out["apply"].get(key, 0) + v
            elif name == "dimctl_dim_profile_changes_total":
                out["profile_changes"] += v
        return out

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
        self.daemon = None  # the running Daemon, whose counters each run reads
        self.napi_before = None  # the NAPI's read-back before the next run
        self.poll = 1.0  # s between read-backs of the NAPI during a run (0: none)

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


class Poller:
    """Reads the NAPI's setting back every `interval` s while a run goes (netlink, no NET_RX):
    what a daemon held during the run, not only after it (it may move as soon as the load
    stops)."""

    def __init__(self, napi, interval):
        self.napi, self.interval = napi, interval
        self.samples = []
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self):
        t0 = time.monotonic()
        while not self.done.wait(self.interval):
            try:
                cfg = self.napi.read()
            except (subprocess.CalledProcessError, ValueError):
                continue
            self.samples.append({"t": round(time.monotonic() - t0, 3), "config": cfg})

    def __enter__(self):
        if self.interval > 0:
            self.thread.start()
        return self

    def __exit__(self, *exc):
        self.done.set()
        if self.thread.is_alive():
            self.thread.join()


def setting(cfg):
    return [(c["defer_hard_irqs"], c["gro_flush_timeout_ns"]) for c in cfg]


def client(meter, mode, seconds, extra=(), fifo=False):
    cmd = ["taskset", "-c", str(CLIENT_CPU), "sockperf", mode, "-i", IP_A, "-p", str(PORT),
           "-t", str(seconds), "-m", str(MSG), *extra]
    if fifo:
        cmd = ["chrt", "-f", "20", *cmd]
    # The daemon's counters are read outside the metered interval (the HTTP request to it is
    # NET_RX work on dhb-a's loopback).
    before = meter.daemon.counters() if meter.daemon else None
    start = meter.sample()
    with Poller(meter.napi, meter.poll) as poller:
        p = subprocess.run(in_ns(NS_B, *cmd), text=True, capture_output=True,
                           timeout=seconds + 30)
    end = meter.sample()
    after = meter.daemon.counters() if meter.daemon else None
    r = parse_sockperf(p.stdout + p.stderr)
    if p.returncode != 0 or (mode != "throughput" and not r["percentiles"]):
        raise RuntimeError(f"sockperf {mode} failed ({p.returncode}): "
                           f"{(p.stdout + p.stderr)[-400:]}")
    r.update(Meter.delta(start, end))
    # What the NAPI held when the run ended (for the daemon: the profile it had chosen).
    r["napi_config"] = meter.napi.read()
    # Read back during the run (every --poll s): what the NAPI held while the load ran.
    r["napi_during"] = poller.samples
    seq = [setting(meter.napi_before)] + [setting(x["config"]) for x in poller.samples] \
        + [setting(r["napi_config"])]
    r["readback_changes"] = sum(a != b for a, b in zip(seq, seq[1:]))
    if meter.daemon:
        # Changes of the written setting during the run, by the daemon's own count: every write
        # (napi-set) that succeeded, over the time between the two reads of its endpoint.
        # Without the endpoint, the read-backs polled during the run.
        if before and after:
            apply = {k: after["apply"].get(k, 0) - before["apply"].get(k, 0)
                     for k in after["apply"]}
            r["daemon_apply"] = apply  # by result: ok, failed, rate_limited
            r["daemon_writes"] = apply.get("ok", 0)
            r["daemon_profile_changes"] = after["profile_changes"] - before["profile_changes"]
            r["changes_per_s"] = r["daemon_writes"] / (after["t"] - before["t"])
            r["changes_source"] = "daemon"
        else:
            r["changes_per_s"] = r["readback_changes"] / (end["t"] - start["t"])
            r["changes_source"] = "readback"
    meter.napi_before = r["napi_config"]
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

def warm_up(seconds):
    """Unmeasured paced traffic (20k/s) for an efficiency daemon's cost probe: the daemon learns
    what a poll costs once, from probes under traffic that batches (docs/controller/model.md,
    "The cost probe"), and each policy's daemon here lives for one repetition only."""
    if seconds <= 0:
        return
    cmd = ["taskset", "-c", str(CLIENT_CPU), "sockperf", "under-load", "-i", IP_A, "-p", str(PORT),
           "-t", str(seconds), "-m", str(MSG), "--mps", "20000", "--reply-every", "1"]
    subprocess.run(in_ns(NS_B, *cmd), capture_output=True, timeout=seconds + 30)


def apply(policy, napi, daemons, meter, warmup_s=0):
    """Starts a policy; returns a function that ends it."""
    if policy == "none":
        napi.set(0, 0)
        return lambda: None
    m = STATIC.fullmatch(policy)
    if m:
        napi.set(1, int(m.group(1)) * 1000)
        return lambda: napi.set(0, 0)
    d = daemons[policy]
    napi.set(0, 0)
    d.start()
    if daemon_algorithm(policy)[1] is not None:
        warm_up(warmup_s)
    meter.daemon_pid = d.proc.pid
    meter.daemon = d

    def stop():
        meter.daemon_pid = None
        meter.daemon = None
        d.stop()
    return stop


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--out")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--seconds", type=int, default=2, help="per sockperf run (default 2)")
    ap.add_argument("--rates", default="2000,5000,10000,20000,50000")
    ap.add_argument("--policies", default=DEFAULT_POLICIES)
    ap.add_argument("--dimctl", help="the dimctl the daemon policies run (default: BUILD's)")
    ap.add_argument("--warmup", type=int, default=20,
                    help="s of unmeasured 20k/s traffic after an efficiency daemon starts, for its "
                         "cost probe (default 20; 0: none)")
    ap.add_argument("--poll", type=float, default=1.0,
                    help="s between read-backs of the NAPI during each run (default 1; 0: none)")
    ap.add_argument("--sim-policies", metavar="P,...",
                    help="print the `dimctl sim` names of these host policies, comma-separated "
                         "(each without one named on stderr), and exit")
    a = ap.parse_args()
    if a.sim_policies is not None:
        names = []
        for p in a.sim_policies.split(","):
            name, why = sim_policy(p)
            if name:
                names.append(name)
            else:
                print(f"bench/host: {p}: not simulated: {why}", file=sys.stderr)
        print(",".join(names))
        return
    if not a.out:
        ap.error("--out is required")
    a.rates = [int(x) for x in a.rates.split(",")]
    policies = a.policies.split(",")
    bad = [why for why in map(check_policy, policies) if why]
    if bad:
        sys.exit("bench/host/run.py: " + "; ".join(bad))
    if os.geteuid() != 0:
        sys.exit("bench/host/run.py: needs root (network namespaces, napi-set, BPF)")
    if os.cpu_count() < 2:
        sys.exit("bench/host/run.py: needs two CPUs (server and client pinned apart)")

    work = tempfile.mkdtemp(prefix="dimctl-bench-host.")
    result = {"host": os.uname().release, "started": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                                      time.gmtime()),
              "repeats": a.repeats, "seconds": a.seconds, "rates": a.rates, "msg_bytes": MSG,
              "poll_s": a.poll,
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
        for i, p in enumerate(pol for pol in policies if is_daemon(pol)):
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
        meter.poll = a.poll
        t0 = time.monotonic()
        for rep in range(a.repeats):
            order = policies[rep % len(policies):] + policies[:rep % len(policies)]
            for policy in order:
                t = time.monotonic()
                stop = apply(policy, napi, daemons, meter, a.warmup)
                try:
                    napi_during = napi.read()
                    meter.napi_before = napi_during
                    tests = run_policy_tests(a, meter)
                    tests["napi_after"] = napi.read()
                finally:
                    stop()
                    stop = lambda: None  # noqa: E731
                tests["napi_during_start"] = napi_during
                if is_daemon(policy):
                    # What the daemon wrote, as read back during and after each run: a daemon
                    # that wrote nothing measures `none` plus its own CPU, and must not pass for
                    # a policy.
                    seen = {(c["defer_hard_irqs"], c["gro_flush_timeout_ns"])
                            for t in [tests["pingpong"], tests["throughput"],
                                      *tests["underload"].values()]
                            for cfg in [t["napi_config"]] + [x["config"] for x in t["napi_during"]]
                            for c in cfg}
                    tests["daemon_profiles"] = sorted(seen)
                    if seen == {(0, 0)}:
                        print(f"bench/host: WARNING: {policy}: the daemon wrote nothing to the "
                              f"NAPI (see {daemons[policy].log})", file=sys.stderr)
                result["runs"].append({"policy": policy, "repeat": rep, **tests})
                pp = tests["pingpong"]["percentiles"]
                changes = [x["changes_per_s"] for x in [tests["pingpong"], tests["throughput"],
                                                         *tests["underload"].values()]
                           if "changes_per_s" in x]
                print(f"bench/host: rep {rep} {policy:19} pp p50 {pp.get('50.000', 0):8.1f} us  "
                      f"p99 {pp.get('99.000', 0):8.1f}  tput "
                      f"{tests['throughput']['received_per_s']:9.0f}/s  "
                      + (f"changes/s max {max(changes):.2f}  " if changes else "")
                      + f"({time.monotonic() - t:.0f}s)", flush=True)
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
