#!/usr/bin/env python3
"""bench/host/overhead.py: what dimctl costs a busy host (`sudo make bench-overhead`).

    overhead.py run  --build BUILD --out FILE.json [--repeats 7] [--seconds 2] [--rate 20000]
                     [--states S,...] [--seed N] [--meter bpf|none] [--no-bpf-stats]
    overhead.py rest --build BUILD --out FILE.json [--devices 0,10,50] [--seconds 10]
    overhead.py report --runs FILE.json [--rest FILE.json] [--markdown FILE] [--commit C]

`run`: bench/host's veth pair (run.py: dhbb in dhb-b sends to dhba in dhb-a, whose NAPI polls on
the sender's CPU) carries three workloads in each state: a 64-byte UDP flood (sockperf
throughput), a QD=1 ping-pong and one paced rate (--rate, a reply to every message). The states:

  none          nothing of dimctl's (the meter below aside)
  none2         the same again: its ratios to `none` are the machine's own spread
  bpf-napi      napi.bpf.c attached by the daemon's collector, no loop (dimctl_bench_attach_probe)
  bpf-napi-cpu  napi.bpf.c and cpu_time.bpf.c (one run in 8 timed, as for the model policy)
  wake50        a process that wakes every 20 ms and does nothing (the loop's wake-ups alone)
  observe       `dimctl run`, the shipped default config with mode observe
  shadow        `dimctl run`, the shipped default config (deploy/config/dimctl.yaml)
  enforce-napi  `dimctl run` enforcing `method: napi`, `algorithm: static:0` on dhba: the
                default software profile 0, which writes no moderation

Every state's process runs inside dhb-a, so the daemon sees the flooded device. Each repetition
runs every state once in a random order (seeded, recorded); each run is compared with `none`'s
run of the same repetition (paired ratios), and the report gives the medians of those ratios.

Per run: messages the receiver took in per second and its drops; NET_RX softirq time on both
CPUs (the meter: dimctl_bench_cpu_probe, cpu_time.bpf.c with every run timed, present in every
state; --meter none runs without it and without NET_RX time); the sender's and receiver's system
time; the state process's CPU; per-CPU idle (/proc/stat); RES, CAL and TLB interrupts per CPU
(/proc/interrupts); the receiver's context switches; each BPF program's run time and count
(kernel.bpf_stats_enabled, on for the run unless --no-bpf-stats; bpftool); the netlink requests
the daemon sent (its dimctl_netlink_requests_total).

`rest`: the daemon with the default config on an idle host: its CPU per second with no veth
NAPI and with N veth NAPIs in its namespace (one per receiving end, GRO on), per N in --devices.

docs/benchmarks/overhead.md is the reference for the method and the figures.
"""
import argparse
import json
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report as host_report  # noqa: E402  (bench/host/report.py: its section writer)
import run as host  # noqa: E402  (bench/host/run.py: the veth pair, sockperf, the meter)

STATES = ["none", "none2", "bpf-napi", "bpf-napi-cpu", "wake50", "observe", "shadow",
          "enforce-napi"]
PROBE_ARGS = {"bpf-napi": ["--programs", "napi"], "bpf-napi-cpu": ["--programs", "napi,cpu"],
              "wake50": ["--programs", "none", "--wake", "20000"]}
DAEMON_STATES = ("observe", "shadow", "enforce-napi")
WORKLOADS = ("flood", "pingpong", "paced")
METRICS_PORT = 19990
SETTLE_S = 1.0  # after a state's start, before its run: the same for every state


# ---- the states' processes ----------------------------------------------------------------------

def default_config(work, port, mode=None, extra=""):
    """The shipped default config, with only what a benchmark must change: state file, port."""
    with open("deploy/config/dimctl.yaml") as f:
        text = f.read()
    text = re.sub(r"(?m)^state_file: .*$", f"state_file: {work}/state.json", text)
    text = re.sub(r"(?m)^(  listen: ).*$", rf"\g<1>127.0.0.1:{port}", text)
    if mode:
        text = re.sub(r"(?m)^mode: .*$", f"mode: {mode}", text)
    if extra:
        text = re.sub(r"(?m)^devices: \[\]$", "devices:\n" + extra, text)
    return text


ENFORCE_RULE = f"""  - name: overhead
    match:
      interface: ["{host.DEV_A}"]
    mode: enforce
    method: napi
    algorithm: static:0
"""


class StateProcess:
    """The process a state runs in dhb-a (nothing for none/none2)."""

    def __init__(self, state, build, dimctl, work):
        self.state, self.build, self.dimctl = state, build, dimctl
        self.work = os.path.join(work, state)
        os.makedirs(self.work, exist_ok=True)
        self.proc = None
        self.log = os.path.join(self.work, "log")
        if state in DAEMON_STATES:
            self.cfg = os.path.join(self.work, "dimctl.yaml")
            text = default_config(
                self.work, METRICS_PORT,
                mode="observe" if state == "observe" else None,
                extra=ENFORCE_RULE if state == "enforce-napi" else "")
            with open(self.cfg, "w") as f:
                f.write(text)
            r = host.sh(dimctl, "check-config", self.cfg, check=False)
            if r.returncode != 0:
                raise RuntimeError(f"{state}: config refused: {r.stdout}{r.stderr}")

    def start(self):
        # Every state, `none` too, ends its start with the same quiet second: the QD=1 latency of
        # this VM depends on how long its vCPUs were idle before a run (a run right after
        # another is faster than one after a pause), so the gap before a run must not differ
        # between states.
        if self.state in ("none", "none2"):
            time.sleep(SETTLE_S)
            return
        logf = open(self.log, "a")
        if self.state in DAEMON_STATES:
            cmd = [self.dimctl, "run", "--config", self.cfg]
        else:
            cmd = [os.path.join(self.build, "bench/host/dimctl_bench_attach_probe"),
                   *PROBE_ARGS[self.state]]
        self.proc = subprocess.Popen(host.in_ns(host.NS_A, *cmd), stdout=logf,
                                     stderr=subprocess.STDOUT)
        logf.close()
        # Attached, the rules matched and the first periods run before the first message.
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.state} exited {self.proc.returncode}: "
                                   f"{open(self.log).read()[-600:]}")
            if self.ready():
                time.sleep(SETTLE_S)
                return
            time.sleep(0.1)
        raise RuntimeError(f"{self.state}: not ready after 10 s: {open(self.log).read()[-600:]}")

    def ready(self):
        if self.state in DAEMON_STATES:
            return scrape(METRICS_PORT, "/readyz") is not None
        return '"ready":true' in open(self.log).read()

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    @property
    def pid(self):
        return self.proc.pid if self.proc else None


def scrape(port, path="/metrics"):
    r = subprocess.run(host.in_ns(host.NS_A, "curl", "-sf", "--max-time", "2",
                                  f"http://127.0.0.1:{port}{path}"),
                       capture_output=True, text=True)
    return r.stdout if r.returncode == 0 else None


def netlink_requests(text):
    """dimctl_netlink_requests_total by family, from a /metrics page."""
    out = {}
    for m in re.finditer(r'^dimctl_netlink_requests_total\{family="([^"]+)"\} (\S+)$',
                         text or "", re.M):
        out[m.group(1)] = float(m.group(2))
    return out


# ---- counters -------------------------------------------------------------------------------

def cpu_ns(pid):
    """CPU time of every thread of pid, in ns (schedstat: exact, where /proc/PID/stat counts
    10 ms ticks); 0 once it is gone."""
    total = 0
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                total += int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        pass
    return total


def interrupts():
    """RES, CAL, TLB and LOC per CPU from /proc/interrupts."""
    out = {}
    with open("/proc/interrupts") as f:
        ncpu = len(f.readline().split())
        for line in f:
            parts = line.split()
            if parts and parts[0].rstrip(":") in ("RES", "CAL", "TLB", "LOC"):
                out[parts[0].rstrip(":")] = [int(x) for x in parts[1:1 + ncpu]]
    return out


def ctx_switches(pid):
    """Voluntary + involuntary context switches over every thread of pid."""
    total = 0
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                for line in f:
                    if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                        total += int(line.split()[1])
    except OSError:
        pass
    return total


def bpf_programs():
    """Run time and count of every dimctl BPF program, keyed by name#id (ids are per load)."""
    r = subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True, text=True)
    if r.returncode != 0:
        return {}
    out = {}
    for p in json.loads(r.stdout or "[]"):
        if p.get("name", "").startswith("dimctl_"):
            out[f"{p['name']}#{p['id']}"] = (p.get("run_time_ns", 0), p.get("run_cnt", 0))
    return out


class Meter:
    def __init__(self, probe, server_pid):
        self.probe, self.server_pid = probe, server_pid
        self.state_pid = None
        # Loaded before any state runs: the meter's own programs, reported apart.
        self.meter_programs = set(bpf_programs())

    udp_in = host.Meter.udp_in  # the server's InDatagrams and RcvbufErrors

    def sample(self):
        import resource
        s = {"t": time.monotonic(), "udp": self.udp_in(),
             "server_sys": host.proc_ticks(self.server_pid)[1],
             "server_cs": ctx_switches(self.server_pid),
             "state": cpu_ns(self.state_pid) if self.state_pid else 0,
             "children": resource.getrusage(resource.RUSAGE_CHILDREN).ru_stime,
             "idle": {c: v["idle"] for c, v in host.cpu_times().items()},
             "irqs": interrupts(), "bpf": bpf_programs()}
        s["meter"] = self.probe.sample() if self.probe else None
        return s

    def delta(self, a, b):
        hz = os.sysconf("SC_CLK_TCK")
        secs = b["t"] - a["t"]
        received = b["udp"][0] - a["udp"][0]
        n = max(received, 1)
        out = {"seconds": secs, "received": received,
               "drops": b["udp"][1] - a["udp"][1]}
        sys_s = (b["children"] - a["children"]) + (b["server_sys"] - a["server_sys"]) / hz
        state_s = (b["state"] - a["state"]) / 1e9
        out["sys_us_per_msg"] = sys_s * 1e6 / n
        out["state_us_per_msg"] = state_s * 1e6 / n
        out["state_cpu_share"] = state_s / secs
        if a["meter"] and b["meter"]:
            ns = [y["net_rx_ns"] - x["net_rx_ns"]
                  for x, y in zip(a["meter"]["cpus"], b["meter"]["cpus"])]
            out["net_rx_us_per_msg"] = sum(ns) / 1e3 / n
            out["net_rx_ns_by_cpu"] = ns
            out["cpu_us_per_msg"] = out["net_rx_us_per_msg"] + out["sys_us_per_msg"] + \
                out["state_us_per_msg"]
        else:
            out["cpu_us_per_msg"] = out["sys_us_per_msg"] + out["state_us_per_msg"]
        out["server_cs_per_msg"] = (b["server_cs"] - a["server_cs"]) / n
        out["idle_by_cpu"] = {c: (b["idle"][c] - a["idle"][c]) / hz / secs for c in b["idle"]}
        out["irqs_per_s"] = {k: [(y - x) / secs for x, y in zip(a["irqs"][k], b["irqs"][k])]
                             for k in b["irqs"] if k in a["irqs"]}
        progs = {}
        for k, (t1, c1) in b["bpf"].items():
            t0, c0 = a["bpf"].get(k, (0, 0))
            if c1 - c0:
                progs[k] = {"run_ns_per_msg": (t1 - t0) / n, "runs_per_msg": (c1 - c0) / n,
                            "ns_per_run": (t1 - t0) / (c1 - c0),
                            "meter": k in self.meter_programs}
        out["bpf"] = progs
        return out


# ---- sockperf runs --------------------------------------------------------------------------

def one_run(meter, workload, a):
    if workload == "flood":
        mode, extra, fifo = "throughput", [], False
    elif workload == "pingpong":
        mode, extra, fifo = "ping-pong", ["--full-rtt"], True
    else:
        mode, extra, fifo = "under-load", ["--full-rtt", "--mps", str(a.rate),
                                           "--reply-every", "1"], False
    cmd = ["taskset", "-c", str(host.CLIENT_CPU), "sockperf", mode, "-i", host.IP_A, "-p",
           str(host.PORT), "-t", str(a.seconds), "-m", str(host.MSG), *extra]
    if fifo:
        cmd = ["chrt", "-f", "20", *cmd]
    start = meter.sample()
    p = subprocess.run(host.in_ns(host.NS_B, *cmd), text=True, capture_output=True,
                       timeout=a.seconds + 30)
    end = meter.sample()
    r = host.parse_sockperf(p.stdout + p.stderr)
    if p.returncode != 0 or (mode != "throughput" and not r["percentiles"]):
        raise RuntimeError(f"sockperf {mode} failed ({p.returncode}): "
                           f"{(p.stdout + p.stderr)[-400:]}")
    r.update(meter.delta(start, end))
    r["received_per_s"] = r["received"] / r["seconds"]
    return r


def cmd_run(a):
    states = a.states.split(",")
    unknown = [s for s in states if s not in STATES]
    if unknown:
        sys.exit(f"overhead.py: unknown state(s) {unknown}; known: {','.join(STATES)}")
    if "none" not in states:
        sys.exit("overhead.py: the states must include none (every ratio is to it)")
    dimctl = a.dimctl or os.path.join(a.build, "userspace/cli/dimctl")
    for tool in ("sockperf", "bpftool", "curl", "taskset", "chrt"):
        if subprocess.run(["sh", "-c", f"command -v {tool}"], capture_output=True).returncode:
            sys.exit(f"overhead.py: {tool} not found (scripts/deps.sh installs it)")
    rng = random.Random(a.seed)
    work = tempfile.mkdtemp(prefix="dimctl-overhead.")
    result = {"kind": "overhead", "host": os.uname().release,
              "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "commit": host.sh("git", "describe", "--always", "--dirty", check=False)
              .stdout.strip(), "repeats": a.repeats, "seconds": a.seconds, "rate": a.rate,
              "seed": a.seed, "meter": a.meter, "bpf_stats": not a.no_bpf_stats,
              "states": states, "orders": [], "runs": [],
              "loadavg_start": open("/proc/loadavg").read().split()[:3]}
    stats_before = open("/proc/sys/kernel/bpf_stats_enabled").read().strip()
    server = probe = None
    procs = {}
    current = None
    try:
        host.setup()
        procs = {s: StateProcess(s, a.build, dimctl, work) for s in states}
        if not a.no_bpf_stats:
            with open("/proc/sys/kernel/bpf_stats_enabled", "w") as f:
                f.write("1")
        if a.meter == "bpf":
            probe = host.Probe.__new__(host.Probe)
            # The meter without napi.bpf.c: NET_RX time only, so no state's programs are the
            # meter's too.
            probe.p = subprocess.Popen(
                host.in_ns(host.NS_A, os.path.join(a.build, "bench/host/dimctl_bench_cpu_probe")),
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            if json.loads(probe._line() or "{}").get("ready") is not True:
                raise RuntimeError("dimctl_bench_cpu_probe did not start")
        server = subprocess.Popen(
            host.in_ns(host.NS_A, "chrt", "-f", "20", "taskset", "-c", str(host.SERVER_CPU),
                       "sockperf", "server", "-i", host.IP_A, "-p", str(host.PORT)),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.5)
        meter = Meter(probe, server.pid)
        t0 = time.monotonic()
        # One block per workload and repetition, the states in a random order inside it: the
        # runs a ratio pairs are at most one block (8 runs, under a minute) apart, since this
        # machine's speed drifts over minutes.
        for rep in range(a.repeats):
            for w in a.workloads.split(","):
                order = states[:]
                rng.shuffle(order)
                result["orders"].append({"repeat": rep, "workload": w, "order": order})
                for state in order:
                    current = procs[state]
                    current.start()
                    meter.state_pid = current.pid
                    daemon = state in DAEMON_STATES
                    nl0 = netlink_requests(scrape(METRICS_PORT)) if daemon else {}
                    r = one_run(meter, w, a)
                    if daemon:
                        nl1 = netlink_requests(scrape(METRICS_PORT))
                        r["netlink_per_s"] = {k: (v - nl0.get(k, 0)) / r["seconds"]
                                              for k, v in nl1.items()}
                    meter.state_pid = None
                    current.stop()
                    current = None
                    result["runs"].append({"state": state, "repeat": rep, "workload": w, **r})
                    what = (f"{r['received_per_s']:8.0f}/s" if w == "flood" else
                            f"p50 {r['percentiles'].get('50.000', 0):6.1f} us")
                    print(f"overhead: rep {rep} {w:8} {state:13} {what}  cpu "
                          f"{r['cpu_us_per_msg']:5.2f} us/msg", flush=True)
        result["elapsed_s"] = time.monotonic() - t0
    finally:
        if current:
            current.stop()
        if server:
            server.terminate()
            server.wait()
        if probe:
            probe.close()
        with open("/proc/sys/kernel/bpf_stats_enabled", "w") as f:
            f.write(stats_before)
        host.teardown()
        result["loadavg_end"] = open("/proc/loadavg").read().split()[:3]
        with open(a.out, "w") as f:
            json.dump(result, f, indent=1)
        print(f"overhead: wrote {a.out}; logs in {work}")


# ---- the daemon at rest -------------------------------------------------------------------------

REST_NS = "dho-rest"


def cmd_rest(a):
    dimctl = a.dimctl or os.path.join(a.build, "userspace/cli/dimctl")
    counts = [int(x) for x in a.devices.split(",")]
    work = tempfile.mkdtemp(prefix="dimctl-overhead-rest.")
    result = {"kind": "rest", "host": os.uname().release, "seconds": a.seconds,
              "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "commit": host.sh("git", "describe", "--always", "--dirty", check=False)
              .stdout.strip(), "rows": [],
              "loadavg_start": open("/proc/loadavg").read().split()[:3]}
    try:
        for n in counts:
            host.sh("ip", "netns", "del", REST_NS, check=False)
            host.sh("ip", "netns", "add", REST_NS)
            ns = lambda *c: host.in_ns(REST_NS, *c)  # noqa: E731
            host.sh(*ns("ip", "link", "set", "lo", "up"))
            # N pairs, GRO on the receiving end of each: N NAPIs (veth has one only with GRO).
            batch = "".join(f"link add dho{i}a type veth peer name dho{i}b\n" for i in range(n))
            if batch:
                subprocess.run(ns("ip", "-batch", "-"), input=batch, text=True, check=True,
                               capture_output=True)
                for i in range(n):
                    host.sh(*ns("ethtool", "-K", f"dho{i}a", "gro", "on"))
                up = "".join(f"link set dho{i}{e} up\n" for i in range(n) for e in "ab")
                subprocess.run(ns("ip", "-batch", "-"), input=up, text=True, check=True,
                               capture_output=True)
            cfg = os.path.join(work, f"rest-{n}.yaml")
            with open(cfg, "w") as f:
                f.write(default_config(work, METRICS_PORT))
            napis = subprocess.run(ns(dimctl, "napi", "show", "--json"), capture_output=True,
                                   text=True)
            napi_count = len(json.loads(napis.stdout or "[]")) if napis.returncode == 0 else None
            p = subprocess.Popen(ns(dimctl, "run", "--config", cfg), stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
            time.sleep(3)  # past start-up: the first directory and device reads
            t0, c0 = time.monotonic(), cpu_ns(p.pid)
            m0 = netlink_requests(rest_scrape())
            time.sleep(a.seconds)
            t1, c1 = time.monotonic(), cpu_ns(p.pid)
            m1 = netlink_requests(rest_scrape())
            p.send_signal(signal.SIGTERM)
            p.wait(timeout=15)
            row = {"devices": n, "napis": napi_count,
                   "cpu_ms_per_s": (c1 - c0) / 1e6 / (t1 - t0),
                   "netlink_per_s": {k: (v - m0.get(k, 0)) / (t1 - t0) for k, v in m1.items()}}
            result["rows"].append(row)
            print(f"overhead rest: {n:4} devices ({napi_count} NAPIs): "
                  f"{row['cpu_ms_per_s']:.2f} ms CPU per s, netlink {row['netlink_per_s']}",
                  flush=True)
    finally:
        host.sh("ip", "netns", "del", REST_NS, check=False)
        result["loadavg_end"] = open("/proc/loadavg").read().split()[:3]
        with open(a.out, "w") as f:
            json.dump(result, f, indent=1)
        print(f"overhead rest: wrote {a.out}")


def rest_scrape():
    r = subprocess.run(host.in_ns(REST_NS, "curl", "-sf", "--max-time", "2",
                                  f"http://127.0.0.1:{METRICS_PORT}/metrics"),
                       capture_output=True, text=True)
    return r.stdout


# ---- the report -------------------------------------------------------------------------------

def med(values):
    v = [x for x in values if x is not None]
    return statistics.median(v) if v else None


def paired(runs, state, workload, fn):
    """fn(run of state, run of none) per block (repetition and workload) where both ran."""
    by = {(r["state"], r["repeat"], r["workload"]): r for r in runs}
    return [fn(r, by[("none", rep, w)]) for (s, rep, w), r in by.items()
            if s == state and w == workload and ("none", rep, w) in by]


def of(runs, state, workload):
    return [r for r in runs if r["state"] == state and r["workload"] == workload]


def pct(values, q):
    v = sorted(x for x in values if x is not None)
    if not v:
        return None
    k = (len(v) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (k - lo)


def ratio(key):
    return lambda x, y: x[key] / y[key] if y[key] else None


def p50_ratio(x, y):
    return x["percentiles"]["50.000"] / y["percentiles"]["50.000"]


def cpu_delta(x, y):
    return x["cpu_us_per_msg"] - y["cpu_us_per_msg"]


def f(v, fmt):
    return "–" if v is None else format(v, fmt)


def report_text(data, rest, commit):
    runs = data["runs"]
    states = [s for s in STATES if any(r["state"] == s for r in runs)]
    lines = []
    lines.append(f"Measured at {commit or data['commit']}, {data['started'][:10]}, kernel "
                 f"{data['host']}: {data['repeats']} repetitions; per repetition one block per "
                 f"workload, the states in a random order inside it (seed {data['seed']}); "
                 f"{data['seconds']} s sockperf runs; every ratio and difference is to `none` in "
                 f"the same block, and each cell is the median over the repetitions; meter "
                 f"{data['meter']}, bpf_stats {'on' if data['bpf_stats'] else 'off'}; load average "
                 f"{data['loadavg_start'][0]} → {data['loadavg_end'][0]}.")
    lines.append("")
    lines.append("| state | flood msg/s | flood ratio | flood Δ CPU µs/msg | QD=1 p50 µs "
                 "| QD=1 p50 ratio | QD=1 Δ CPU µs/msg | paced p50 ratio | paced Δ CPU µs/msg "
                 "| state process CPU % (flood) |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|")
    for s in states:
        lines.append(
            f"| {s} | {f(med([r['received_per_s'] for r in of(runs, s, 'flood')]), ',.0f')} | "
            f"{f(med(paired(runs, s, 'flood', ratio('received_per_s'))), '.3f')} | "
            f"{f(med(paired(runs, s, 'flood', cpu_delta)), '+.2f')} | "
            f"{f(med([r['percentiles'].get('50.000') for r in of(runs, s, 'pingpong')]), '.1f')} | "
            f"{f(med(paired(runs, s, 'pingpong', p50_ratio)), '.3f')} | "
            f"{f(med(paired(runs, s, 'pingpong', cpu_delta)), '+.2f')} | "
            f"{f(med(paired(runs, s, 'paced', p50_ratio)), '.3f')} | "
            f"{f(med(paired(runs, s, 'paced', cpu_delta)), '+.2f')} | "
            f"{f(med([r['state_cpu_share'] * 100 for r in of(runs, s, 'flood')]), '.2f')} |")
    if "none2" in states:
        fl = paired(runs, "none2", "flood", ratio("received_per_s"))
        pp = paired(runs, "none2", "pingpong", p50_ratio)
        lines.append("")
        lines.append(f"The machine's own spread (`none2` against `none`, nothing different): the "
                     f"flood ratio's 10th-90th percentile over the repetitions "
                     f"{f(pct(fl, 0.1), '.3f')}-{f(pct(fl, 0.9), '.3f')}, QD=1 p50's "
                     f"{f(pct(pp, 0.1), '.3f')}-{f(pct(pp, 0.9), '.3f')}.")
    lines.append("")
    lines.append("Where the flood's CPU goes (medians; µs per message received unless named):")
    lines.append("")
    lines.append("| state | NET_RX | sender + receiver system | state process | its BPF programs "
                 "(ns) | receiver ctx switches | RES/s | CAL/s |")
    lines.append("|---|---|---|---|---|---|---|---|")
    for s in states:
        mine = of(runs, s, "flood")
        irq = {k: med([sum(r["irqs_per_s"].get(k, [0])) for r in mine]) for k in ("RES", "CAL")}
        bpf = med([sum(v["run_ns_per_msg"] for v in r["bpf"].values() if not v["meter"])
                   for r in mine])
        lines.append(
            f"| {s} | {f(med([r.get('net_rx_us_per_msg') for r in mine]), '.2f')} | "
            f"{f(med([r['sys_us_per_msg'] for r in mine]), '.2f')} | "
            f"{f(med([r['state_us_per_msg'] for r in mine]), '.3f')} | {f(bpf, '.1f')} | "
            f"{f(med([r['server_cs_per_msg'] for r in mine]), '.3f')} | "
            f"{f(irq['RES'], ',.0f')} | {f(irq['CAL'], ',.0f')} |")
    nl = [r for r in runs if "netlink_per_s" in r]
    if nl:
        fams = sorted({k for r in nl for k in r["netlink_per_s"]})
        lines.append("")
        lines.append("Netlink requests the daemon sent per second (median over its runs): " +
                     "; ".join(f"{s}: " + ", ".join(
                         f"{k} {med([r['netlink_per_s'].get(k, 0) for r in nl if r['state'] == s]):.1f}"
                         for k in fams) for s in states if any(r["state"] == s for r in nl)) + ".")
    if rest:
        lines.append("")
        lines.append(f"The daemon at rest (the default config, an idle host, {rest['seconds']} s "
                     f"per row, at {rest['commit']}):")
        lines.append("")
        lines.append("| veth NAPIs in its namespace | CPU ms per s | netlink requests per s |")
        lines.append("|---|---|---|")
        for row in rest["rows"]:
            lines.append(f"| {row['napis']} | {row['cpu_ms_per_s']:.2f} | "
                         f"{sum(row['netlink_per_s'].values()):.1f} |")
    return "\n".join(lines) + "\n"


def cmd_report(a):
    with open(a.runs) as f:
        data = json.load(f)
    rest = None
    if a.rest:
        with open(a.rest) as f:
            rest = json.load(f)
    text = report_text(data, rest, a.commit)
    if not a.markdown:
        print(text)
        return
    host_report.replace_section(a.markdown, "overhead", text, "overhead.py")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--build", default="build")
    r.add_argument("--out", required=True)
    r.add_argument("--repeats", type=int, default=7)
    r.add_argument("--seconds", type=int, default=2)
    r.add_argument("--rate", type=int, default=20000)
    r.add_argument("--workloads", default=",".join(WORKLOADS))
    r.add_argument("--states", default=",".join(STATES))
    r.add_argument("--seed", type=int, default=1)
    r.add_argument("--meter", choices=("bpf", "none"), default="bpf")
    r.add_argument("--no-bpf-stats", action="store_true")
    r.add_argument("--dimctl")
    s = sub.add_parser("rest")
    s.add_argument("--build", default="build")
    s.add_argument("--out", required=True)
    s.add_argument("--devices", default="0,10,50,100")
    s.add_argument("--seconds", type=int, default=10)
    s.add_argument("--dimctl")
    p = sub.add_parser("report")
    p.add_argument("--runs", required=True)
    p.add_argument("--rest")
    p.add_argument("--markdown")
    p.add_argument("--commit")
    a = ap.parse_args()
    if a.cmd != "report" and os.geteuid() != 0:
        sys.exit("overhead.py: needs root (network namespaces, BPF): sudo make bench-overhead")
    {"run": cmd_run, "rest": cmd_rest, "report": cmd_report}[a.cmd](a)


if __name__ == "__main__":
    main()
