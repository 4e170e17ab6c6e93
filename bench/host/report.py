#!/usr/bin/env python3
"""bench/host/report.py: tables and plots from bench/host/run.py's JSON (and the simulator's).

    bench/host/report.py --runs RUN.json [RUN.json ...] [--sim-dir DIR] [--markdown FILE]
                         [--figures DIR] [--commit C]

Medians over the repetitions of each policy, with min..max beside them. Without --markdown the
section is printed; with it, the part of FILE between <!-- host:begin --> and <!-- host:end -->
is replaced. --figures draws SVGs with gnuplot (latency and CPU per message against the
offered rate, one line per policy). --sim-dir holds `dimctl sim --json` outputs of the
h1/h2/h3 workloads (bench/sim/workloads/h*-napi-*.yaml), put beside the host's figures.
Python 3 standard library only.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys

ORDER = ["none", "static:1", "static:2", "static:3", "dimctl-net-eqe", "dimctl-model",
         "dimctl-net-eqe-idle0", "dimctl-model-idle0"]
LABEL = {"none": "none", "static:1": "static 8 µs", "static:2": "static 64 µs",
         "static:3": "static 128 µs", "dimctl-net-eqe": "dimctl net DIM (EQE)",
         "dimctl-model": "dimctl model", "dimctl-net-eqe-idle0": "dimctl net DIM, profile 0 off",
         "dimctl-model-idle0": "dimctl model, profile 0 off"}
SIM_FILES = {"pingpong": "h1-napi-pingpong.json", "underload": "h2-napi-rates.json",
             "throughput": "h3-napi-flood.json"}


def load(paths):
    runs, meta = [], []
    for p in paths:
        with open(p) as f:
            d = json.load(f)
        meta.append(d)
        runs += d["runs"]
    return runs, meta


def policies_of(runs):
    seen = {r["policy"] for r in runs}
    return [p for p in ORDER if p in seen] + sorted(seen - set(ORDER))


def stat(values):
    v = [x for x in values if x is not None]
    if not v:
        return None
    return statistics.median(v), min(v), max(v)


def fmt(s, digits=1, spread=True):
    if s is None:
        return "–"
    med, lo, hi = s
    f = f"{{:.{digits}f}}"
    if not spread or len({lo, hi}) == 1:
        return f.format(med)
    return f"{f.format(med)} ({f.format(lo)}–{f.format(hi)})"


def pct(test, key):
    return test["percentiles"].get(key)


def tests_of(runs, policy, pick):
    return [pick(r) for r in runs if r["policy"] == policy]


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)


def rates_of(meta):
    return [str(r) for r in meta[0]["rates"]]


# ---- the simulator's runs of the same shapes --------------------------------------------------

def load_sim(sim_dir):
    out = {}
    if not sim_dir:
        return out
    for kind, name in SIM_FILES.items():
        path = os.path.join(sim_dir, name)
        if os.path.exists(path):
            with open(path) as f:
                out[kind] = {r["policy"]: r for r in json.load(f)["runs"]}
    return out


def sim_q(phase, q):
    x = phase["latency"]["quantiles"].get(q)
    return x["ns"] / 1e3 if x else None


def sim_phase(sim, kind, policy, phase_name=None):
    r = sim.get(kind, {}).get(policy)
    if not r:
        return None
    if phase_name is None:
        return r["total"]
    for ph in r["phases"]:
        if ph["phase"] == phase_name:
            return ph
    return None


def rate_name(rate):
    r = int(rate)
    return f"{r // 1000}k" if r % 1000 == 0 else str(r)


# ---- sections -----------------------------------------------------------------------------------

def section(runs, meta, sim, figures_rel):
    pols = policies_of(runs)
    rates = rates_of(meta)
    reps = max(r["repeat"] for r in runs) + 1
    out = []
    m0 = meta[0]
    skipped = {}
    for m in meta:
        skipped.update(m.get("skipped", {}))
    out.append(
        f"Host kernel {m0['host']}, {m0['started']}; {reps} repetitions of every policy, "
        f"interleaved (each repetition runs every policy once, in a rotated order), sockperf "
        f"{m0['seconds']} s per run, {m0['msg_bytes']}-byte UDP messages over a veth pair in "
        f"two network namespaces, software moderation on the receiver's NAPI. Cells: median "
        f"(min–max) over the repetitions. Load average at the start "
        f"{' '.join(m0['loadavg_start'])}, at the end {' '.join(m0.get('loadavg_end', []))}: "
        f"the 2 cores were shared with other builds, so the tails (p99 and beyond) carry "
        f"scheduling delays of other processes; the medians and the CPU per message are the "
        f"figures to compare. Method: docs/benchmarks/host.md.")
    if skipped:
        out.append("")
        def reason(msg):
            # "FILE:LINE:COL: key: reason (allowed here: ...)" -> "key: reason"
            first = msg.splitlines()[0].split(": ", 1)[-1]
            return first.split(" (allowed here")[0][:120]
        out.append("Not measured in this run: " + ", ".join(
            f"`{p}` (this dimctl refused its config: `{reason(msg)}`)"
            for p, msg in skipped.items()) + ".")
    out.append("")
    wrote = {}
    for r in runs:
        if "daemon_profiles" in r:
            wrote.setdefault(r["policy"], set()).update(map(tuple, r["daemon_profiles"]))
    if wrote:
        out.append("What the daemon policies wrote, read back after every run (defer-hard-irqs, "
                   "gro-flush-timeout µs): " + "; ".join(
                       f"`{p}` " + ", ".join(f"({d}, {t / 1e3:g})" for d, t in sorted(v))
                       + (" — **nothing: these rows are `none` plus the daemon's CPU**"
                          if v == {(0, 0)} else "")
                       for p, v in wrote.items()) + ".")
        out.append("")

    # QD=1 ping-pong
    out.append("**QD=1 ping-pong** (round trip, µs; sockperf ping-pong; CPU per round trip: "
               "NET_RX softirq time on both cores plus the sockperf processes' system time "
               "and the daemon's CPU; NET_RX runs per round trip)")
    out.append("")
    rows = []
    for p in pols:
        t = tests_of(runs, p, lambda r: r["pingpong"])
        rows.append([LABEL.get(p, p)] + [fmt(stat([pct(x, k) for x in t])) for k in
                                         ("50.000", "99.000", "99.990", "max")]
                    + [fmt(stat([x["cpu_us_per_msg"] for x in t])),
                       fmt(stat([x["net_rx_per_msg"] for x in t]), 2, False),
                       fmt(stat([x.get("observations") for x in t]), 0, False)])
    out.append(table(["policy", "p50", "p99", "p99.99", "max", "CPU µs/msg", "NET_RX/msg",
                      "samples"], rows))
    out.append("")

    # latency vs offered rate
    for q, name in (("50.000", "p50"), ("99.000", "p99"), ("99.990", "p99.99")):
        out.append(f"**Latency {name} vs offered rate** (round trip, µs; sockperf under-load, "
                   f"every message answered)")
        out.append("")
        rows = []
        for p in pols:
            rows.append([LABEL.get(p, p)] + [
                fmt(stat([pct(x, q) for x in tests_of(runs, p, lambda r: r["underload"][rt])]))
                for rt in rates])
        out.append(table(["policy"] + [f"{rate_name(r)}/s" for r in rates], rows))
        out.append("")

    # CPU per message vs offered rate
    out.append("**CPU per message vs offered rate** (µs per message the receiver got: NET_RX "
               "softirq on both cores, exact from cpu_time.bpf.c, plus the sockperf processes' "
               "system time and the daemon's CPU; `tput` = the throughput run)")
    out.append("")
    rows = []
    for p in pols:
        rows.append([LABEL.get(p, p)] + [
            fmt(stat([x["cpu_us_per_msg"] for x in tests_of(runs, p, lambda r: r["underload"][rt])]))
            for rt in rates] + [fmt(stat([x["cpu_us_per_msg"] for x in tests_of(
                runs, p, lambda r: r["throughput"])]))])
    out.append(table(["policy"] + [f"{rate_name(r)}/s" for r in rates] + ["tput"], rows))
    out.append("")
    out.append("NET_RX softirq runs per message (1.0 + 1.0 = one poll each way; below 1 the "
               "moderated NAPI batches):")
    out.append("")
    rows = []
    for p in pols:
        rows.append([LABEL.get(p, p)] + [
            fmt(stat([x["net_rx_per_msg"] for x in tests_of(runs, p, lambda r: r["underload"][rt])]),
                2, False) for rt in rates] + [fmt(stat([x["net_rx_per_msg"] for x in tests_of(
                    runs, p, lambda r: r["throughput"])]), 2, False)])
    out.append(table(["policy"] + [f"{rate_name(r)}/s" for r in rates] + ["tput"], rows))
    out.append("")

    # throughput
    out.append("**Throughput** (sockperf throughput, 64-byte messages as fast as the sender "
               "goes: what the receiver took in, messages/s; the socket's drops beside)")
    out.append("")
    rows = []
    for p in pols:
        t = tests_of(runs, p, lambda r: r["throughput"])
        rows.append([LABEL.get(p, p), fmt(stat([x["received_per_s"] for x in t]), 0),
                     fmt(stat([x.get("send_rate") for x in t]), 0),
                     fmt(stat([x["rcvbuf_errors"] / max(x.get("total_run_s") or 1, 1e-9)
                               for x in t]), 0),
                     fmt(stat([x["cpu_us_per_msg"] for x in t]))])
    out.append(table(["policy", "received/s", "sent/s", "dropped (rcvbuf)/s", "CPU µs/msg"],
                     rows))
    out.append("")

    # winners
    out.append("**Which policy wins where (measured):** lowest median p50 and p99 latency, "
               "and lowest median CPU per message, per offered rate (a tie = the medians of "
               "the first two are within each other's min–max):")
    out.append("")
    rows = []
    for rt in rates + ["pp", "tput"]:
        def pick(r, rt=rt):
            if rt == "pp":
                return r["pingpong"]
            if rt == "tput":
                return r["throughput"]
            return r["underload"][rt]
        cells = [rate_name(rt) + "/s" if rt not in ("pp", "tput") else
                 {"pp": "QD=1 ping-pong", "tput": "throughput"}[rt]]
        for key in (("lat", "50.000"), ("lat", "99.000"), ("cpu", None)):
            if rt == "tput" and key[0] == "lat":
                cells.append("–")
                continue
            scores = []
            for p in pols:
                t = tests_of(runs, p, pick)
                s = stat([pct(x, key[1]) if key[0] == "lat" else x["cpu_us_per_msg"] for x in t])
                if s:
                    scores.append((s[0], s, p))
            scores.sort()
            if not scores:
                cells.append("–")
                continue
            best = scores[0]
            tie = len(scores) > 1 and scores[1][1][1] <= best[1][2]
            cells.append(f"{LABEL.get(best[2], best[2])} {best[0]:.1f}"
                         + (f" (≈ {LABEL.get(scores[1][2], scores[1][2])})" if tie else ""))
        rows.append(cells)
    out.append(table(["offered", "p50", "p99", "CPU/msg"], rows))
    out.append("")

    if figures_rel:
        out.append(f"![latency vs offered rate]({figures_rel}/host-latency-vs-rate.svg)")
        out.append(f"![CPU per message vs offered rate]({figures_rel}/host-cpu-vs-rate.svg)")
        out.append("")

    if sim:
        out += sim_section(runs, meta, sim, pols, rates)
    return "\n".join(out)


def sim_section(runs, meta, sim, pols, rates):
    out = ["**Simulator vs host, same shapes** (bench/sim/workloads/h1-napi-pingpong, "
           "h2-napi-rates, h3-napi-flood: the same NAPI under software moderation, the same "
           "profiles; host medians as above, the simulator deterministic). Latency p50 / p99 "
           "in µs; polls of the moderated NAPI per message (host: napi.bpf.c's count for "
           "dhba; sim: polls per completion):", ""]
    rows = []
    for p in pols:
        cells = [LABEL.get(p, p)]
        host_pp = tests_of(runs, p, lambda r: r["pingpong"])
        ph = sim_phase(sim, "pingpong", p)
        cells.append(f"{fmt(stat([pct(x, '50.000') for x in host_pp]), 1, False)} / "
                     f"{(sim_q(ph, 'p50') or 0):.1f}" if ph else "–")
        for rt in rates:
            host = tests_of(runs, p, lambda r: r["underload"][rt])
            ph = sim_phase(sim, "underload", p, rate_name(rt))
            h = f"{fmt(stat([pct(x, '50.000') for x in host]), 1, False)}/" \
                f"{fmt(stat([pct(x, '99.000') for x in host]), 0, False)}"
            s = f"{(sim_q(ph, 'p50') or 0):.1f}/{(sim_q(ph, 'p99') or 0):.0f}" if ph else "–"
            cells.append(f"{h} · {s}")
        rows.append(cells)
    out.append(table(["policy", "QD=1 p50 host / sim"]
                     + [f"{rate_name(r)}/s p50/p99 host · sim" for r in rates], rows))
    out.append("")
    rows = []
    for p in pols:
        cells = [LABEL.get(p, p)]
        for rt in rates:
            host = tests_of(runs, p, lambda r: r["underload"][rt])
            ph = sim_phase(sim, "underload", p, rate_name(rt))
            h = stat([x.get("polls_per_msg") for x in host])
            s = ph["polls"] / ph["completions"] if ph and ph["completions"] else None
            cells.append(f"{fmt(h, 2, False)} · {s:.2f}" if s is not None else fmt(h, 2, False))
        host = tests_of(runs, p, lambda r: r["throughput"])
        ph = sim_phase(sim, "throughput", p)
        h = stat([x.get("polls_per_msg") for x in host])
        s = ph["polls"] / ph["completions"] if ph and ph["completions"] else None
        cells.append(f"{fmt(h, 2, False)} · {s:.2f}" if s is not None else fmt(h, 2, False))
        # The simulator charges the moderated NAPI's polls only: compare the NET_RX time (the
        # throughput run has no replies, so all of it is the moderated direction's).
        cpu_h = stat([x["net_rx_us_per_msg"] for x in host])
        cpu_s = ph["cpu_per_completion_ns"] / 1e3 if ph else None
        cells.append(f"{fmt(cpu_h, 1, False)} · {cpu_s:.1f}" if cpu_s is not None else "–")
        rows.append(cells)
    out.append(table(["policy"] + [f"{rate_name(r)}/s polls/msg host · sim" for r in rates]
                     + ["tput polls/msg host · sim", "tput NET_RX µs/msg host · sim CPU/msg"],
                     rows))
    out.append("")
    return out


# ---- figures ------------------------------------------------------------------------------------

def figures(runs, meta, out_dir):
    if not shutil.which("gnuplot"):
        print("bench/host/report.py: gnuplot not found, no figures", file=sys.stderr)
        return False
    os.makedirs(out_dir, exist_ok=True)
    pols = policies_of(runs)
    rates = rates_of(meta)
    data = os.path.join(out_dir, "host-data.tmp")
    series = []
    with open(data, "w") as f:
        for i, p in enumerate(pols):
            f.write(f"# {p}\n")
            for rt in rates:
                t = tests_of(runs, p, lambda r: r["underload"][rt])
                p50 = stat([pct(x, "50.000") for x in t])
                p99 = stat([pct(x, "99.000") for x in t])
                cpu = stat([x["cpu_us_per_msg"] for x in t])
                f.write(f"{rt} {p50[0] if p50 else 'NaN'} {p99[0] if p99 else 'NaN'} "
                        f"{cpu[0] if cpu else 'NaN'}\n")
            f.write("\n\n")
            series.append((i, LABEL.get(p, p)))
    common = ("set terminal svg size 760,420 dynamic font 'sans,11'\n"
              "set logscale x\nset xlabel 'offered rate (messages/s)'\nset key outside right\n"
              "set grid\n")
    lat = common + (f"set output '{out_dir}/host-latency-vs-rate.svg'\n"
                    "set logscale y\nset ylabel 'round trip (µs)'\n"
                    "set title 'veth NAPI, software moderation: p50 (solid) and p99 (dashed)'\n"
                    "plot " + ", ".join(
                        f"'{data}' index {i} using 1:2 with linespoints lc {i + 1} dt 1 "
                        f"title '{name} p50', '{data}' index {i} using 1:3 with linespoints "
                        f"lc {i + 1} dt 2 notitle" for i, name in series) + "\n")
    cpu = common + (f"set output '{out_dir}/host-cpu-vs-rate.svg'\n"
                    "set ylabel 'CPU per message (µs)'\n"
                    "set title 'veth NAPI, software moderation: CPU per message'\n"
                    "plot " + ", ".join(
                        f"'{data}' index {i} using 1:4 with linespoints lc {i + 1} "
                        f"title '{name}'" for i, name in series) + "\n")
    ok = True
    for script in (lat, cpu):
        r = subprocess.run(["gnuplot"], input=script, text=True, capture_output=True)
        if r.returncode != 0:
            print(f"bench/host/report.py: gnuplot: {r.stderr[:300]}", file=sys.stderr)
            ok = False
    os.remove(data)
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", nargs="+", required=True)
    ap.add_argument("--sim-dir")
    ap.add_argument("--markdown")
    ap.add_argument("--figures")
    ap.add_argument("--commit", default="")
    a = ap.parse_args()
    runs, meta = load(a.runs)
    if not runs:
        sys.exit("bench/host/report.py: no runs in " + " ".join(a.runs))
    sim = load_sim(a.sim_dir)
    rel = None
    if a.figures and figures(runs, meta, a.figures):
        rel = os.path.relpath(a.figures, os.path.dirname(os.path.abspath(a.markdown))) \
            if a.markdown else a.figures
    text = section(runs, meta, sim, rel)
    commit = meta[0].get("commit") or a.commit
    if commit:
        daemon = meta[0].get("daemon_dimctl", "the build's")
        text = (f"Harness at `{commit}`; the daemon policies ran "
                f"{'that build' if daemon == 'the build' + chr(39) + 's' else daemon}. " + text)
    if not a.markdown:
        print(text)
        return
    replace_section(a.markdown, "host", text + "\n", "bench/host/report.py")
    print(f"bench/host/report.py: wrote the host section of {a.markdown}")


def replace_section(path, name, body, who):
    """Puts body between <!-- NAME:begin --> (and a newline) and <!-- NAME:end --> in path;
    exits naming the file when it has no such section (the file is left as it was)."""
    with open(path) as f:
        doc = f.read()
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    if begin not in doc or end not in doc:
        sys.exit(f"{who}: {path} has no {begin} ... {end} section")
    head, rest = doc.split(begin, 1)
    _, tail = rest.split(end, 1)
    with open(path, "w") as f:
        f.write(head + begin + "\n" + body + end + tail)


if __name__ == "__main__":
    main()
