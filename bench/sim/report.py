#!/usr/bin/env python3
"""The simulator report, from the `dimctl sim --json --timeline` documents bench/sim/run.sh writes.

usage: report.py --runs DIR --commit SHA --markdown docs/BENCHMARKS.md --figures docs/sim

- replaces what lies between <!-- sim:begin --> and <!-- sim:end --> in the markdown file (the
  rest of the file is left alone; the section is appended when the markers are missing);
- writes docs/sim/full-report.md (every metric of every phase of every run);
- draws SVG figures into the figures directory with gnuplot: QD=1 latency CDF to p99.999 (W1),
  latency vs IOPS per policy (W2), moderation profile and latency through step changes (W5).

Every table and figure names its workload, cost model, seed and the commit. Standard library
only (json); the figures need gnuplot (Debian gnuplot-nox, installed by scripts/deps.sh).
"""
import argparse
import datetime
import json
import math
import pathlib
import subprocess
import sys
import tempfile

BEGIN, END = "<!-- sim:begin -->", "<!-- sim:end -->"
QUANTILES = ["p50", "p99", "p99.9", "p99.99", "p99.999"]

# (timer us, count) of each profile, as dim/include/dim/profile.h (RX tables for net).
TABLES = {
    "rdma": [(1, 1), (1, 4), (2, 4), (2, 8), (4, 8), (16, 8), (16, 16), (32, 16), (32, 32)],
    "net-eqe": [(1, 256), (8, 256), (64, 256), (128, 256), (256, 256)],
    "net-cqe": [(2, 256), (8, 128), (16, 64), (32, 64), (64, 64)],
}

# The founding series' table (performance-research A1-A3: rdma_dim cover letter, 512B/4k/64k
# reads, IOPS before -> after).
SEED_IOPS = {"512B": (7.7e6, 8.2e6), "4k": (1.8e6, 2.65e6), "64k": (175e3, 175e3)}


# ---------------------------------------------------------------------------------- loading

class Run:
    """One `dimctl sim` invocation: a workload (or variant) under every policy."""

    def __init__(self, run_id, cmd, doc):
        self.id = run_id
        self.base, _, self.variant = run_id.partition("@")
        self.cmd = cmd
        self.doc = doc
        self.w = doc["workload"]
        self.policies = [r["policy"] for r in doc["runs"]]
        self.by_policy = {r["policy"]: r for r in doc["runs"]}

    def phase_names(self):
        return [p["name"] for p in self.w["phases"]]

    def phase(self, policy, name=None):
        r = self.by_policy[policy]
        if name is None:
            return r["total"]
        return next(p for p in r["phases"] if p["phase"] == name)

    def flags(self):
        """The flags a variant adds to its workload file (after --json --timeline)."""
        return self.cmd.partition("--timeline")[2].strip()

    def caption(self):
        w = self.w
        variant = f" (here with `{self.flags()}`)" if self.flags() else ""
        return (f"`{self.id}`: {w['description']}{variant}; {w['queues']} "
                f"queue{'s' if w['queues'] > 1 else ''}, table {w['table']}, cost model "
                f"**{w['cost_model']}**, seed {w['seed']}")


def load_runs(directory):
    runs = {}
    manifest = pathlib.Path(directory) / "manifest.tsv"
    for line in manifest.read_text().splitlines():
        if not line.strip():
            continue
        run_id, cmd = line.split("\t", 1)
        with open(pathlib.Path(directory) / f"{run_id}.json", encoding="utf-8") as fh:
            runs[run_id] = Run(run_id, cmd, json.load(fh))
    return runs


# ---------------------------------------------------------------------------------- formatting

def us(ns):
    v = ns / 1e3
    if v < 10:
        return f"{v:.2f}"
    if v < 1000:
        return f"{v:.1f}"
    return f"{v:,.0f}"


def count(v):
    if v >= 1e9:
        return f"{v / 1e9:.2f}G"
    if v >= 1e6:
        return f"{v / 1e6:.2f}M"
    if v >= 1e4:
        return f"{v / 1e3:.1f}k"
    if v >= 100:
        return f"{v:.0f}"
    return f"{v:.2f}"


def quant(lat, name):
    """A quantile in us, marked * when fewer than 100 completions lie beyond it."""
    if lat["count"] == 0:
        return "-"
    q = lat["quantiles"][name]
    return us(q["ns"]) + ("" if q["significant"] else "\\*")


def pct(new, old):
    if old == 0:
        return "-"
    return f"{100 * (new - old) / old:+.1f} %"


def convergence(ns):
    if ns is None:
        return "-"
    if ns < 0:
        return "never"
    return f"{ns / 1e6:.0f}"


def md_table(head, rows, align=None):
    align = align or ["l"] + ["r"] * (len(head) - 1)
    out = ["| " + " | ".join(head) + " |",
           "|" + "|".join(":---" if a == "l" else "---:" for a in align) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return out


def policy_text(name, table):
    if name == "none":
        return "no moderation (N = 1, T = 0): the latency floor, the interrupt ceiling"
    if name.startswith("static:"):
        ix = int(name.split(":")[1])
        t, n = TABLES[table][ix]
        return f"profile {ix} of the {table} table always (T = {t} us, N = {n})"
    if name.startswith("kernel-"):
        return "the kernel's DIM (dim:: library, the kernel's code paths and 64-event windows)"
    if name.startswith("dimctl-model-host"):
        return ("dimctl's model-based policy told the workload's costs and timer semantics "
                "(`model:` completion_cost = completion + app, interrupt_cost = irq + poll, timer)")
    if name.startswith("dimctl-model"):
        return ("dimctl's model-based policy (the daemon's Controller, algorithm model, default "
                f"costs {MODEL_COSTS_US[0]} µs per completion and {MODEL_COSTS_US[1]} µs per "
                "interrupt)")
    if name.startswith("dimctl-"):
        return "dimctl's daemon Controller running DIM on sampled counters every 20 ms"
    if name == "oracle":
        return "best static profile per phase in hindsight (throughput within 1 %, then p99, then CPU)"
    return ""


# ---------------------------------------------------------------------------------- figures

def style(policy, policies):
    """Line colour and width per policy, the same role the same colour in every figure; earlier
    columns drawn wider so that policies whose curves coincide stay visible."""
    statics = [p for p in policies if p.startswith("static:")]
    if policy == "none":
        color = "#000000"
    elif policy.startswith("static:"):
        color = ["#1f77b4", "#17becf", "#9467bd", "#8c564b"][statics.index(policy) % 4]
    elif policy.startswith("kernel-net-cqe"):
        color = "#8c1d1d"
    elif policy.startswith("kernel-"):
        color = "#d62728"
    elif policy.startswith("dimctl-model-host"):
        color = "#e377c2"
    elif policy.startswith("dimctl-model"):
        color = "#ff7f0e"
    elif policy.startswith("dimctl-"):
        color = "#2ca02c"
    else:  # the oracle
        color = "#7f7f7f"
    width = 1.5 + 0.7 * (len(policies) - 1 - policies.index(policy))
    return f"lc rgb '{color}' lw {width:.1f}"


class Plotter:
    def __init__(self, out_dir, commit):
        self.out = pathlib.Path(out_dir).resolve()
        self.out.mkdir(parents=True, exist_ok=True)
        self.commit = commit
        self.tmp = pathlib.Path(tempfile.mkdtemp(prefix="dimctl-sim-report-"))
        self.made = []

    def gnuplot(self, name, script):
        path = self.tmp / f"{name}.gp"
        path.write_text(script)
        subprocess.run(["gnuplot", str(path)], check=True, cwd=self.tmp)
        self.made.append(name)

    @staticmethod
    def header(svg, title, width=900, height=520):
        return (f"set terminal svg size {width},{height} dynamic enhanced font 'Helvetica,12' "
                f"background rgb 'white'\nset output '{svg}'\nset title \"{title}\" noenhanced\n"
                "set grid lc rgb '#dddddd'\nset key outside right top noenhanced\n")

    def cdf(self, run, name):
        """Tail latency: fraction of completions slower than x, log-log, to p99.999 and max."""
        data = self.tmp / f"{name}.dat"
        plots = []
        with open(data, "w") as fh:
            block = 0
            for policy in run.policies:
                lat = run.phase(policy)["latency"]
                n = lat["count"]
                pts = [(x / 1e3, max(1 - q, 0.5 / n)) for q, x in lat["cdf"]]
                # Solid while >= 100 completions lie beyond the point, dashed after.
                sig = [p for p in pts if p[1] * n >= 100]
                rest = [p for p in pts if p[1] * n <= 100]
                for part in (sig, rest):
                    for x, y in part:
                        fh.write(f"{x:.4f} {y:.4e}\n")
                    fh.write("\n\n")
                st = style(policy, run.policies)
                plots.append(f"'{data.name}' index {block} with lines {st} title '{policy}'")
                plots.append(f"'{data.name}' index {block + 1} with lines {st} dt 2 notitle")
                block += 2
        w = run.w
        title = (f"{run.id}: QD=1 latency tail (cost {w['cost_model']}, seed {w['seed']}, "
                 f"commit {self.commit})")
        script = self.header(f"{self.out / (name + '.svg')}", title)
        script += ("set logscale xy\nset xlabel 'completion latency (us)'\n"
                   "set ylabel 'fraction of completions slower'\nset format y '10^{%L}'\n"
                   "set yrange [*:1.5]\n"
                   "set arrow from graph 0, first 1e-5 to graph 1, first 1e-5 nohead dt 3 lc rgb '#888888'\n"
                   "set label 'p99.999' at graph 0.01, first 1.6e-5 tc rgb '#666666'\n"
                   "set label 'dashed: fewer than 100 completions beyond' at graph 0.01, graph 0.04 "
                   "tc rgb '#666666'\n")
        script += "plot " + ", \\\n     ".join(plots) + "\n"
        self.gnuplot(name, script)
        return name + ".svg"

    def latency_vs_iops(self, run, name):
        data = self.tmp / f"{name}.dat"
        plots = []
        with open(data, "w") as fh:
            for i, policy in enumerate(run.policies):
                for ph in run.phase_names():
                    p = run.phase(policy, ph)
                    if p["completions"] == 0:
                        continue
                    fh.write(f"{p['throughput'] / 1e3:.3f} {p['latency']['quantiles']['p99']['ns'] / 1e3:.3f} "
                             f"{ph}\n")
                fh.write("\n\n")
                plots.append(f"'{data.name}' index {i} using 1:2 with linespoints "
                             f"{style(policy, run.policies)} pt 7 ps 0.8 title '{policy}'")
        w = run.w
        title = (f"{run.id}: p99 latency vs throughput per phase (cost {w['cost_model']}, "
                 f"seed {w['seed']}, commit {self.commit})")
        script = self.header(f"{self.out / (name + '.svg')}", title)
        script += ("set logscale y\nset xlabel 'throughput (thousand completions/s)'\n"
                   "set ylabel 'p99 latency (us)'\n")
        script += "plot " + ", \\\n     ".join(plots) + "\n"
        self.gnuplot(name, script)
        return name + ".svg"

    def timeline(self, run, name, high_phases, what="through the steps"):
        """Profile index (top) and mean latency (bottom) through step changes."""
        data = self.tmp / f"{name}.dat"
        with open(data, "w") as fh:
            for policy in run.policies:
                win = run.by_policy[policy]["windows"]
                t, prof = win["t_ns"], win["profile"]
                # The profile exactly: every change (a step plot needs no other point).
                for i in range(len(t)):
                    if i == 0 or i == len(t) - 1 or prof[i] != prof[i - 1]:
                        fh.write(f"{t[i] / 1e6:.3f} {prof[i]}\n")
                fh.write("\n\n")
                # The latency in at most ~600 bins (mean over the bin, weighted by completions):
                # a figure cannot show more, and the SVG stays small.
                k = max(1, math.ceil(len(t) / 600))
                for b in range(0, len(t), k):
                    n = sum(win["completions"][b:b + k])
                    lat = sum(c * m for c, m in zip(win["completions"][b:b + k],
                                                    win["mean_latency_ns"][b:b + k]))
                    fh.write(f"{t[b] / 1e6:.3f} {lat / n / 1e3 if n else float('nan'):.3f}\n")
                fh.write("\n\n")
        # Shade the high-load phases.
        rects, start = [], 0
        for p in run.w["phases"]:
            end = start + p["duration_ns"]
            if p["name"] in high_phases:
                rects.append(f"set object rect from {start / 1e6}, graph 0 to {end / 1e6}, graph 1 "
                             "behind fc rgb '#f3e6c8' fs solid 1.0 noborder\n")
            start = end
        w = run.w
        size = len(TABLES[w["table"]])
        title = (f"{run.id}: profile and latency {what} (cost {w['cost_model']}, "
                 f"seed {w['seed']}, commit {self.commit}"
                 f"{'; shaded: high load' if high_phases else ''})")
        script = self.header(f"{self.out / (name + '.svg')}", title, 1000, 760)
        # The same left margin in both panels, so that their time axes line up.
        script += "set multiplot layout 2,1\nunset title\nset lmargin 14\n"
        script += "".join(rects)
        ytics = ", ".join(f"'{i} ({t}us/{n})' {i}" for i, (t, n) in enumerate(TABLES[w["table"]]))
        script += (f"set ylabel 'profile (T/N)'\nset yrange [-1.5:{size - 0.5}]\n"
                   f"set ytics ({ytics}, 'none' -1)\nset xlabel 'time (ms)'\nset title \"{title}\" noenhanced\n")
        plots = [f"'{data.name}' index {2 * i} using 1:2 with steps {style(p, run.policies)} "
                 f"title '{p}'" for i, p in enumerate(run.policies)]
        script += "plot " + ", \\\n     ".join(plots) + "\n"
        script += ("unset title\nset ytics auto\nset yrange [*:*]\nset logscale y\n"
                   f"set ylabel 'mean latency (us, {run.w['window_ns'] / 1e6:g} ms windows, "
                   "binned)'\n")
        plots = [f"'{data.name}' index {2 * i + 1} using 1:2 with lines lc rgb "
                 f"'{style(p, run.policies).split(chr(39))[1]}' lw 1 title '{p}'"
                 for i, p in enumerate(run.policies)]
        script += "plot " + ", \\\n     ".join(plots) + "\nunset multiplot\n"
        self.gnuplot(name, script)
        return name + ".svg"


# ---------------------------------------------------------------------------------- targets

# Issue 12's targets for the model policy (docs/CONTROLLER.md "The cost-model policy"). These
# are the targets' definitions; every figure compared against them comes from the JSON.
W1_EXCESS_PCT, W1_EXCESS_NS = 2.0, 500  # excess over `none`: met when within either bound
W3_OF_BEST_STATIC = 0.98
CONTROL_PERIOD_NS = 20_000_000  # the daemon's default interval (the dimctl-* policies' period)
W5_PERIODS = 2
W5_MIN_STEADY_NS = 5 * CONTROL_PERIOD_NS  # a phase must leave this much time to judge settling
# What a policy settles on must be good: the phase's p99 within 10 % of the oracle's.
W5_P99_OF_ORACLE = 1.10
CHANGE_BUDGET = 10  # dim::ModelParams::max_changes_per_s, the model's default change budget
MODEL_COSTS_US = (1, 2)  # dim::CostParams defaults: per completion, per interrupt (config `model:`)
LIMIT_CYCLE_RATE = 1.0  # changes/s in the steady half above which a policy has not settled


def role(policy):
    """The column a policy's figures go to in the target tables (None: not judged there)."""
    if policy.startswith("dimctl-model-host"):
        return "dimctl-model-host"
    if policy.startswith("dimctl-model"):
        return "dimctl-model"
    if policy.startswith("kernel-"):
        return "kernel DIM"
    if policy.startswith("dimctl-"):
        return "dimctl DIM"
    return None


ROLES = ["dimctl-model", "dimctl-model-host", "kernel DIM", "dimctl DIM"]


def comparison_policies(run):
    """The model policy and, beside it, kernel DIM and dimctl's DIM, as present in the run."""
    return sorted((p for p in run.policies if role(p)), key=lambda p: (ROLES.index(role(p)), p))


def verdict(ok):
    return "**met**" if ok else "**missed**"


def excess_cell(run, policy, q, phase=None):
    """(text, met) for quantile q's excess over `none`."""
    lat = run.phase(policy, phase)["latency"]
    ref = run.phase("none", phase)["latency"]
    if lat["count"] == 0 or ref["count"] == 0:
        return "-", None
    a, b = lat["quantiles"][q], ref["quantiles"][q]
    d = a["ns"] - b["ns"]
    rel = 100 * d / b["ns"] if b["ns"] else 0.0
    ok = rel <= W1_EXCESS_PCT or d <= W1_EXCESS_NS
    sig = "" if a["significant"] and b["significant"] else "\\*"
    return f"{d / 1e3:+.2f} us ({rel:+.1f} %){sig}", ok


def best_static(run, phase=None):
    """The best static profile's throughput: the most any static column (the oracle is one per
    phase) completed."""
    cands = [p for p in run.policies if p.startswith("static:") or p == "oracle"]
    return max(run.phase(p, phase)["throughput"] for p in cands) if cands else 0.0


def profile_series(run, policy, start_ns, end_ns):
    """(t_ns, profile) of the windows starting in [start_ns, end_ns)."""
    win = run.by_policy[policy].get("windows")
    if not win:
        return []
    return [(t, p) for t, p in zip(win["t_ns"], win["profile"]) if start_ns <= t < end_ns]


def phase_bounds(run):
    start, out = 0, {}
    for p in run.w["phases"]:
        out[p["name"]] = (start, start + p["duration_ns"])
        start += p["duration_ns"]
    return out


def settle_ns(run, policy, name):
    """Time from the phase's start to the policy's last profile change in it (0: no change);
    None when the windows are missing."""
    start, end = phase_bounds(run)[name]
    series = profile_series(run, policy, start, end)
    if not series:
        return None
    last = 0
    for (_, p0), (t1, p1) in zip(series, series[1:]):
        if p1 != p0:
            last = t1 - start
    # A change in the phase's first window counts from that window's end.
    if series[0][1] != profile_at(run, policy, start - 1):
        last = max(last, run.w["window_ns"])
    return last


def profile_at(run, policy, t_ns):
    win = run.by_policy[policy].get("windows")
    if not win or t_ns < 0:
        return None
    prof = None
    for t, p in zip(win["t_ns"], win["profile"]):
        if t > t_ns:
            break
        prof = p
    return prof


def limit_cycle(run, policy):
    """(changes/s in the steady half, amplitude in profiles, cycling?) of a one-phase periodic run.
    The steady half is the second half of the run; a limit cycle is a policy still changing
    profile there at LIMIT_CYCLE_RATE or more, or above the change budget over the whole run."""
    start, end = phase_bounds(run)[run.phase_names()[-1]]
    mid = start + (end - start) // 2
    series = profile_series(run, policy, mid, end)
    if not series:
        return None
    changes = sum(1 for (_, a), (_, b) in zip(series, series[1:]) if a != b)
    rate = changes / ((end - mid) / 1e9)
    profiles = [p for _, p in series]
    amp = max(profiles) - min(profiles)
    cycling = ((rate >= LIMIT_CYCLE_RATE and amp >= 1)
               or run.phase(policy)["changes_per_s"] > CHANGE_BUDGET)
    return rate, amp, cycling


def change_cells(r, pols):
    """W8's two judgements per policy: (changes/s cells, limit-cycle cells)."""
    cells, lc = {}, {}
    for p in pols:
        c = r.phase(p)["changes_per_s"]
        cells[p] = (f"{c:.1f}/s", c <= CHANGE_BUDGET)
        x = limit_cycle(r, p)
        if x is None:
            lc[p] = ("-", None)
        else:
            rate, amp, cyc = x
            lc[p] = (f"{'cycle' if cyc else 'none'}: {rate:.1f}/s in the second half, "
                     f"amplitude {amp}", not cyc)
    return cells, lc


def target_rows(runs):
    """(target, workload, {policy: (text, met)}) rows; policies: model, kernel DIM, dimctl DIM."""
    rows = []
    # W1: every QD=1 run (base, eight queues, the sweeps), p99 and p99.99.
    w1 = sorted((r for r in runs.values() if r.base.startswith("w1-")), key=lambda r: r.id)
    for q in ("p99", "p99.99"):
        for r in w1:
            rows.append((f"W1 {q} excess over none ≤ +{W1_EXCESS_PCT:g} % or ≤ "
                         f"+{W1_EXCESS_NS / 1e3:g} us", r,
                         {p: excess_cell(r, p, q) for p in comparison_policies(r)}))
    # W3: saturation throughput vs the best static profile and vs kernel DIM.
    for r in sorted((r for r in runs.values() if r.base.startswith("w3-")), key=lambda r: r.id):
        best = best_static(r)
        kernel = next((p for p in r.policies if p.startswith("kernel-")), None)
        cells, kcells = {}, {}
        for p in comparison_policies(r):
            t = r.phase(p)["throughput"]
            cells[p] = (f"{count(t)} = {100 * t / best:.1f} % of {count(best)}",
                        t >= W3_OF_BEST_STATIC * best)
            if kernel and not p.startswith("kernel-"):
                k = r.phase(kernel)["throughput"]
                kcells[p] = (f"{count(t)} = {100 * t / k:.1f} % of {count(k)}", t >= k)
        rows.append((f"W3 throughput ≥ {100 * W3_OF_BEST_STATIC:g} % of the best static profile",
                     r, cells))
        if kcells:
            rows.append(("W3 throughput ≥ kernel DIM's", r, kcells))
    # W5: settling after each step, in control periods, per rate.
    for r in sorted((r for r in runs.values() if r.base.startswith("w5-")), key=lambda r: r.id):
        bounds = phase_bounds(r)
        base_rate = next((s["rate"] for s in r.w["sources"] if "rate" in s), None)
        for i, ph in enumerate(r.w["phases"]):
            start, end = bounds[ph["name"]]
            if i == 0 or end - start < W5_MIN_STEADY_NS:
                continue
            prev = r.w["phases"][i - 1]
            step = "up" if ph["load"] > prev["load"] else "down"
            rate = (f"{count(base_rate * prev['load'])} → {count(base_rate * ph['load'])}/s"
                    if base_rate else f"×{ph['load'] / prev['load']:g}")
            cells = {}
            oracle = (r.phase("oracle", ph["name"]).get("oracle_choice", "")
                      if "oracle" in r.by_policy else "")
            ref = (r.phase("oracle", ph["name"])["latency"]["quantiles"]["p99"]["ns"]
                   if oracle else 0)
            for p in comparison_policies(r):
                s = settle_ns(r, p, ph["name"])
                if s is None:
                    cells[p] = ("-", None)
                    continue
                held = profile_at(r, p, end - 1)
                p99 = r.phase(p, ph["name"])["latency"]["quantiles"]["p99"]["ns"]
                good = not ref or p99 <= W5_P99_OF_ORACLE * ref
                rel = f", p99 {p99 / ref:.2f}× oracle" if ref else ""
                cells[p] = (f"{s / CONTROL_PERIOD_NS:.1f} ({s / 1e6:.0f} ms) → {held}{rel}",
                            s <= W5_PERIODS * CONTROL_PERIOD_NS and good)
            rows.append((f"W5 settles ≤ {W5_PERIODS} control periods after a step ({step} "
                         f"{rate}, phase {ph['name']}; oracle {oracle or '-'})", r, cells))
    # W8: change rate and limit cycles under periodic load.
    for r in sorted((r for r in runs.values() if r.base.startswith("w8-")), key=lambda r: r.id):
        cells, lc = change_cells(r, comparison_policies(r))
        rows.append((f"W8 changes/s ≤ {CHANGE_BUDGET} (the model's change budget)", r, cells))
        rows.append(("W8 no limit cycle", r, lc))
    return rows


def target_table(rows):
    """One row per target and run; per role (model, kernel DIM, dimctl DIM) the figure and
    met / missed. A run with two policies of one role (kernel net DIM in EQE and CQE mode) gets
    one line per policy of that role."""
    roles = [x for x in ROLES if any(role(p) == x for _, _, cells in rows for p in cells)]
    head = ["target", "workload"]
    for x in roles:
        head += [x, "met?"]
    out = []
    for target, r, cells in rows:
        per_role = {x: [p for p in cells if role(p) == x] for x in roles}
        lines = max([len(v) for v in per_role.values()] + [1])
        for i in range(lines):
            row = [target if i == 0 else "〃", f"`{r.id}`"]
            for x in roles:
                ps = per_role[x]
                if i >= len(ps):
                    row += ["-" if i == 0 else "", ""]
                    continue
                text, ok = cells[ps[i]]
                name = f"`{ps[i]}`: " if len(ps) > 1 else ""
                row += [name + text, "" if ok is None else verdict(ok)]
            out.append(row)
    return md_table(head, out, ["l", "l"] + ["r", "l"] * len(roles))


def section_targets(runs):
    rows = target_rows(runs)
    if not rows:
        return []
    model = [p for r in runs.values() for p in r.policies if p.startswith("dimctl-model")]
    out = ["### Targets of the model policy (issue 12)", "",
           "Each target from the JSON of the runs below; kernel DIM and dimctl's DIM (the "
           "daemon's Controller) are judged by the same rule beside it. Definitions:", "",
           f"- **W1**: the QD=1 latency quantile minus `none`'s, met when at most "
           f"+{W1_EXCESS_PCT:g} % or at most +{W1_EXCESS_NS / 1e3:g} us (`*`: a quantile with "
           "fewer than 100 completions beyond it).",
           f"- **W3**: the saturation throughput against the best static profile (the most any "
           f"static column or the oracle completed), met at ≥ {100 * W3_OF_BEST_STATIC:g} %; "
           "and against kernel DIM's, met at ≥ 100 %.",
           f"- **W5**: settling time = from the step (the phase's start) to the policy's last "
           "profile change in that phase (1 ms timeline windows), in "
           f"{CONTROL_PERIOD_NS // 10**6} ms control periods, on every phase after the first "
           f"that lasts at least {W5_MIN_STEADY_NS // 10**6} ms (the 10 ms steps are shorter than a decision); met "
           f"at ≤ {W5_PERIODS} periods when what the policy settles on is good: the phase's p99 "
           f"at most {W5_P99_OF_ORACLE:g}× the oracle's (a policy that never moves settles at "
           "once, and is judged by that). The cell gives the settling time in periods (ms), the "
           "profile held at the phase's end and the p99 against the oracle's; the row names "
           "the oracle's choice. The latency-based convergence of the W5 tables below (every 1 ms "
           "window within ±10 % of the oracle) is stricter and noisier at the low rates.",
           f"- **W8**: changes/s over the whole run, met at ≤ {CHANGE_BUDGET} (the model's "
           "default change budget, `max_changes_per_s`); a **limit cycle** is a policy still "
           f"changing profile at ≥ {LIMIT_CYCLE_RATE:g} change/s through the second half of the "
           "periodic run (where the load is steady in distribution, so a settled policy holds "
           f"one profile), or one above {CHANGE_BUDGET} changes/s over the run; the cell gives "
           "the second half's change rate and the range of profiles it visits (amplitude).",
           ""]
    if not model:
        out += ["(No run includes `dimctl-model`: this dimctl does not know it.)", ""]
    out += target_table(rows) + [""]
    out += target_summary(runs, rows)
    return out


def model_costs_us(run, policy):
    """(per completion, per interrupt) in us the model policy is told: the defaults, or for
    dimctl-model-host the moderated stage's cost model (completion + app, irq + poll)."""
    if policy.startswith("dimctl-model-host"):
        c = run.w["stages"][0]["cost"]
        return ((c["completion_ns"] + c["app_ns"]) / 1e3, (c["irq_ns"] + c["poll_ns"]) / 1e3)
    return MODEL_COSTS_US


def one_queue_per_core(runs, r, name):
    """The same workload with one queue per core, when run.sh ran it: what the policy reaches
    when each queue's counters carry its core's load."""
    v = runs.get(f"{r.base}@1q-per-core")
    if v is None or name not in v.by_policy:
        return ""
    best = best_static(v)
    t = v.phase(name)["throughput"]
    k = next((p for p in v.policies if p.startswith("kernel-")), None)
    kt = f"; kernel DIM {100 * v.phase(k)['throughput'] / best:.1f} %" if k else ""
    return (f" With one queue per core (`{v.id}`, `{v.flags()}`) it reaches "
            f"{count(t)} = {100 * t / best:.1f} % of the best static profile{kt}.")


def target_summary(runs, rows):
    """Per model policy: how many rows it meets, and the mechanism behind missed W3 and W5 rows
    (figures from the runs)."""
    out = []
    names = sorted({p for _, _, cells in rows for p in cells
                    if role(p).startswith("dimctl-model")})
    for name in names:
        verdicts = [(t, r, cells[name][1]) for t, r, cells in rows
                    if name in cells and cells[name][1] is not None]
        missed = [(t, r) for t, r, ok in verdicts if not ok]
        out += [f"`{name}` meets {len(verdicts) - len(missed)} of {len(verdicts)} rows"
                + (": missed " + "; ".join(f"{t.split(' (')[0]} on `{r.id}`" for t, r in missed)
                   if missed else "") + ".", ""]
        for r in sorted({r.id: r for t, r in missed if t.startswith("W3")}.values(),
                        key=lambda r: r.id):
            st = r.w["stages"][0]
            held = sorted(set((r.by_policy[name].get("windows") or {}).get("profile", [])))
            m = r.phase(name)
            per_queue = m["throughput"] / r.w["queues"]
            cc, ci = model_costs_us(r, name)
            if r.w["queues"] <= st["cores"]:
                best = best_static(r)
                last = profile_at(r, name, phase_bounds(r)[r.phase_names()[-1]][1] - 1)
                c = st["cost"]
                out += [f"- Why `{r.id}`: here each queue has a core of its own and `{name}` "
                        f"moves (profiles {held}, {last} at the end) but reaches "
                        f"{count(m['throughput'])} = {100 * m['throughput'] / best:.1f} % of the "
                        f"best static profile: the profile its cost model ({cc:g} µs per "
                        f"completion, {ci:g} µs per interrupt; the workload's "
                        f"{(c['completion_ns'] + c['app_ns']) / 1e3:g} + "
                        f"{(c['irq_ns'] + c['poll_ns']) / 1e3:g} µs) predicts best at this load "
                        "batches less than the best static one.", ""]
                continue
            # The simulator gives the queues of one core one completion vector, so the model
            # judges each CQ with its core's load: k queues alike per core.
            k = r.w["queues"] / st["cores"]
            per_core = m["throughput"] / st["cores"]
            lead = (f"- Why `{r.id}`: `{name}` judges each CQ's load as its core's ({k:g} CQs "
                    f"on each completion vector, so {k:g} sharers)")
            if held == [0]:
                out += [lead + f" and, with its costs ({cc:g} µs per completion, {ci:g} µs per "
                        f"interrupt), predicts about {100 * per_core * (cc + ci) * 1e-6:.0f} % "
                        f"utilisation unmoderated at {count(per_core)}/s per core: too light for "
                        "batching to pay by those costs, so it holds profile 0. The host spends "
                        f"{us(m['cpu_per_completion_ns'])} µs per completion (CPU "
                        f"{100 * m['cpu_utilisation']:.0f} % busy): the default costs are too low "
                        "for it, which is what `model:` costs (`dimctl-model-host`) are for."
                        + one_queue_per_core(runs, r, name), ""]
                continue
            cands = [p for p in r.policies if p.startswith("static:") or p == "oracle"]
            top = max(cands, key=lambda p: r.phase(p)["throughput"])
            out += [lead + f" and batches (profiles {held}, "
                    f"{m['completions_per_interrupt']:.1f} completions per interrupt), but less "
                    f"than the best static profile (`{top}`, "
                    f"{r.phase(top)['completions_per_interrupt']:.1f} per interrupt): at "
                    f"{count(per_core)}/s per core its cost model ({cc:g} µs per completion, "
                    f"{ci:g} µs per interrupt) predicts the least latency for a profile short of "
                    "the most throughput, which is what saturation rewards."
                    + one_queue_per_core(runs, r, name), ""]
        for t, r in missed:
            if not t.startswith("W5"):
                continue
            ph = t.split("phase ")[1].split(";")[0]
            m, o = r.phase(name, ph), r.phase("oracle", ph)
            cc, ci = model_costs_us(r, name)
            out += [f"- Why `{r.id}` phase {ph}: `{name}` settles at once but on profile "
                    f"{profile_at(r, name, phase_bounds(r)[ph][1] - 1)} (p99 "
                    f"{quant(m['latency'], 'p99')} us) where the oracle takes "
                    f"{o.get('oracle_choice', '?')} (p99 {quant(o['latency'], 'p99')} us). At "
                    f"{count(m['throughput'])}/s and its costs ({cc:g} + {ci:g} µs) it predicts "
                    f"about {100 * m['throughput'] * (cc + ci) * 1e-6:.0f} % utilisation "
                    "unmoderated and too little gain from batching to move (its thresholds and "
                    "their up margin); the core is "
                    f"{100 * m['cpu_utilisation']:.0f} % busy at {us(m['cpu_per_completion_ns'])} "
                    "µs per completion.", ""]
    return out


# ---------------------------------------------------------------------------------- sections

def reproduce(runs):
    out = ["", "<details><summary>commands</summary>", "", "```sh"]
    out += [r.cmd for r in runs]
    out += ["```", "", "</details>", ""]
    return out


def latency_table(run, phase=None):
    head = ["policy"] + [f"{q} (us)" for q in QUANTILES] + ["max (us)", "mean (us)", "p99 − none",
                                                             "p99.99 − none", "CPU/IO (us)",
                                                             "interrupts/s"]
    none = run.phase("none", phase)["latency"] if "none" in run.by_policy else None
    rows = []
    for policy in run.policies:
        p = run.phase(policy, phase)
        lat = p["latency"]
        excess = []
        for q in ("p99", "p99.99"):
            if none is None:
                excess.append("-")
            else:
                excess.append(f"{(lat['quantiles'][q]['ns'] - none['quantiles'][q]['ns']) / 1e3:+.2f}")
        rows.append([policy] + [quant(lat, q) for q in QUANTILES] +
                    [us(lat["max_ns"]), us(lat["mean_ns"])] + excess +
                    [us(p["cpu_per_completion_ns"]), count(p["interrupts_per_s"])])
    return md_table(head, rows)


def section_w1(runs, plot):
    out = ["### W1 — QD=1 latency, single queue and multi-queue (review question 1)", ""]
    figs = []
    for rid in ("w1-qd1", "w1-qd1-8q"):
        if rid not in runs:
            continue
        r = runs[rid]
        n = r.phase(r.policies[0])["latency"]["count"]
        out += [r.caption() + f"; {count(n)} completions per policy.", ""]
        out += latency_table(r) + [""]
        figs.append((rid, plot.cdf(r, f"{rid}-cdf")))
    for rid, svg in figs:
        out += [f"![{rid}: QD=1 latency tail to p99.999 and max](sim/{svg})", ""]
    sweep = [r for r in runs.values() if r.base == "w1-qd1" and r.variant]
    if sweep:
        base = runs.get("w1-qd1")
        policies = (base or sweep[0]).policies
        out += ["Sweeps of the single-queue case (one flag changed each; p99 / p99.99 in us, "
                "`*` not significant):", ""]
        rows = []
        for r in ([base] if base else []) + sorted(sweep, key=lambda x: x.variant):
            st = r.w["stages"][0]
            label = (f"{r.variant or 'base'}: service {st['service']['text']}, "
                     f"{st['timer']}, cost {st['cost']['name']}")
            cells = []
            for p in policies:
                lat = r.phase(p)["latency"] if p in r.by_policy else None
                cells.append("-" if lat is None else f"{quant(lat, 'p99')} / {quant(lat, 'p99.99')}")
            rows.append([label] + cells)
        out += md_table(["variant"] + policies, rows) + [""]
    out += reproduce([r for r in runs.values() if r.base.startswith("w1-")])
    return out


def section_w2(runs, plot):
    out = ["### W2 — latency vs IOPS (review question 2)", "",
           "Each phase is one point: its throughput and its p99 latency (`*` not significant). "
           "Where the offered load exceeds what the core completes, a backlog grows through the "
           "phase and its latency is the backlog's age; the overloaded phases come last.", ""]
    for rid in ("w2-closed", "w2-closed@8q", "w2-open"):
        if rid not in runs:
            continue
        r = runs[rid]
        out += [r.caption() + ". Cells: throughput / p99 (us).", ""]
        rows = []
        for ph in r.phase_names():
            cells = []
            for p in r.policies:
                m = r.phase(p, ph)
                cells.append(f"{count(m['throughput'])} / {quant(m['latency'], 'p99')}")
            rows.append([ph] + cells)
        out += md_table(["phase"] + r.policies, rows) + [""]
        svg = plot.latency_vs_iops(r, rid.replace("@", "-"))
        out += [f"![{rid}: p99 latency vs throughput](sim/{svg})", ""]
    out += reproduce([r for r in runs.values() if r.base.startswith("w2-")])
    return out


def section_w3(runs):
    out = ["### W3 — saturation throughput: the founding series' table", ""]
    sizes = [s for s in ("512B", "4k", "64k") if f"w3-sat-{s}" in runs]
    if not sizes:
        return []
    first = runs[f"w3-sat-{sizes[0]}"]
    policies = first.policies
    seeds = sorted({r.w["seed"] for r in runs.values() if r.base.startswith("w3-")})
    out += [f"8 queues on 2 host cores, 32 requests outstanding per queue, constant service "
            f"(null_blk-like, as the seed's testbed), cost models 512B / 4k / 64k (the 64k run is "
            f"bound by a shared 100 Gb/s link), seed {', '.join(map(str, seeds))} (a closed loop "
            "with constant service draws no random numbers: every seed gives the same run). "
            "Cells: throughput, change vs `none`.", ""]
    rows, summary = [], {}
    for size in sizes:
        group = [r for r in runs.values() if r.base == f"w3-sat-{size}" and not r.variant]
        mean = {}
        cells = []
        for p in policies:
            vals = [r.phase(p)["throughput"] for r in group if p in r.by_policy]
            mean[p] = sum(vals) / len(vals)
            spread = f" ({count(min(vals))}–{count(max(vals))})" if len(vals) > 1 else ""
            change = "" if p == "none" or "none" not in mean else f", {pct(mean[p], mean['none'])}"
            cells.append(f"{count(mean[p])}{spread}{change}")
        before, after = SEED_IOPS[size]
        rows.append([size] + cells + [f"{count(before)} → {count(after)} ({pct(after, before)})"])
        summary[size] = mean
    out += md_table(["size"] + policies + ["seed's table (real HW, A1–A3)"], rows) + [""]
    rows = []
    for size in sizes:
        r = runs[f"w3-sat-{size}"]
        rows.append([size] + [f"{us(r.phase(p)['cpu_per_completion_ns'])} / "
                              f"{r.phase(p)['completions_per_interrupt']:.1f} / "
                              f"{r.phase(p)['cpu_utilisation'] * 100:.0f} %" for p in policies])
    out += ["CPU per completion (us) / completions per interrupt / CPU busy, seed "
            f"{first.w['seed']}:", ""]
    out += md_table(["size"] + policies, rows) + [""]
    if "kernel-rdma" in policies and "none" in policies:
        parts = [f"{s} {pct(summary[s]['kernel-rdma'], summary[s]['none'])}" for s in sizes]
        out += [f"Kernel RDMA DIM vs no moderation, mean throughput: {', '.join(parts)} "
                "(the seed's direction: up at 512B and 4k, unchanged at 64k; magnitudes depend on "
                "the cost model, not calibrated to the CX-5 testbed).", ""]
    variants = sorted((r for r in runs.values() if r.base.startswith("w3-") and r.variant),
                      key=lambda r: r.id)
    if variants:
        out += ["Variants (" + "; ".join(f"`{r.id}`: `{r.flags()}`" for r in variants) +
                "), throughput and its share of the best static profile's:", ""]
        rows = []
        for r in variants:
            best = best_static(r)
            rows.append([f"`{r.id}`"] + [f"{count(r.phase(p)['throughput'])} "
                                         f"({100 * r.phase(p)['throughput'] / best:.1f} %)"
                                         for p in r.policies])
        out += md_table(["run"] + variants[0].policies, rows) + [""]
    out += reproduce([r for r in runs.values() if r.base.startswith("w3-")])
    return out


def adaptivity_table(run_list, cell):
    policies = run_list[0].policies
    rows = [[f"`{r.id}`"] + [cell(r, p) for p in policies] for r in run_list]
    return md_table(["workload"] + policies, rows)


def section_adapt(runs, plot):
    out = ["### W4, W5, W8 — adapting to change, how well and how fast (review question 3)", ""]
    w5 = [runs[k] for k in ("w5-step-x10", "w5-step-x100", "w5-step-net") if k in runs]
    for r in w5:
        out += [r.caption() + ".", "",
                "Convergence (ms after the phase start until every later 1 ms window is within "
                "±10 % of the oracle's mean latency and CPU per completion, `never` if not, "
                "`-` not computed) / p99 (us) per phase:", ""]
        rows = []
        for ph in r.phase_names():
            rows.append([ph] + [f"{convergence(r.phase(p, ph)['convergence_ns'])} / "
                                f"{quant(r.phase(p, ph)['latency'], 'p99')}" for p in r.policies])
        tot = [r.phase(p) for p in r.policies]
        rows.append(["whole run: changes/s, CPU/IO (us)"] +
                    [f"{t['changes_per_s']:.1f}, {us(t['cpu_per_completion_ns'])}" for t in tot])
        out += md_table(["phase"] + r.policies, rows) + [""]
        high = [p["name"] for p in r.w["phases"] if p["load"] > 1]
        svg = plot.timeline(r, r.id + "-timeline", high)
        out += [f"![{r.id}: profile and latency timeline](sim/{svg})", ""]
    for prefix, what in (("w4-", "W4 bursty on/off"), ("w8-", "W8 adversarial periodic load")):
        group = sorted((r for r in runs.values() if r.base.startswith(prefix)), key=lambda x: x.id)
        if not group:
            continue
        out += [f"{what}: " + "; ".join(r.caption() for r in group) + ".", "",
                "Cells: p99 (us) / CPU per completion (us) / moderation changes per second; "
                "p99 relative to the oracle's in brackets.", ""]

        def cell(r, p):
            t = r.phase(p)
            o = r.phase("oracle")["latency"]["quantiles"]["p99"]["ns"] if "oracle" in r.by_policy else 0
            rel = f" ({t['latency']['quantiles']['p99']['ns'] / o:.2f}×)" if o else ""
            return (f"{quant(t['latency'], 'p99')}{rel} / {us(t['cpu_per_completion_ns'])} / "
                    f"{t['changes_per_s']:.1f}")
        out += adaptivity_table(group, cell) + [""]
    out += reproduce([r for r in runs.values() if r.base[:3] in ("w4-", "w5-", "w8-")])
    return out


def section_w6(runs):
    if "w6-mixed" not in runs:
        return []
    r = runs["w6-mixed"]
    out = ["### W6 — a QD=1 flow sharing a queue with a bulk flow", "", r.caption() + ".", ""]

    def flow(p, ph, name):
        return next(f for f in r.phase(p, ph)["flows"] if f["flow"] == name)

    rows = []
    for label, fn in (
        ("qd1 flow p99, alone (us)", lambda p: quant(flow(p, "solo", "qd1")["latency"], "p99")),
        ("qd1 flow p99, with bulk (us)", lambda p: quant(flow(p, "mixed", "qd1")["latency"], "p99")),
        ("qd1 flow p99 with / alone", lambda p: f"{flow(p, 'mixed', 'qd1')['latency']['quantiles']['p99']['ns'] / flow(p, 'solo', 'qd1')['latency']['quantiles']['p99']['ns']:.2f}×"),
        ("qd1 flow p99.99 with bulk (us)", lambda p: quant(flow(p, "mixed", "qd1")["latency"], "p99.99")),
        ("bulk flow p99 (us)", lambda p: quant(flow(p, "mixed", "bulk")["latency"], "p99")),
        ("throughput with bulk (/s)", lambda p: count(r.phase(p, "mixed")["throughput"])),
        ("CPU busy with bulk", lambda p: f"{r.phase(p, 'mixed')['cpu_utilisation'] * 100:.0f} %"),
    ):
        rows.append([label] + [fn(p) for p in r.policies])
    out += md_table(["", *r.policies], rows) + [""]
    out += reproduce([r])
    return out


def section_w7(runs):
    group = [runs[k] for k in ("w7-host", "w7-target", "w7-both") if k in runs]
    if not group:
        return []
    out = ["### W7 — host vs target moderation (review: separate the two sides)", "",
           "Two stages per request: the target (device log-normal 5 us, its CQ and core) then the "
           "host (fabric round trip 3 us, its CQ and core). The policy runs on the stages marked "
           "moderated; the other side interrupts per completion. " +
           f"Cost models {group[0].w['cost_model']} (target+host: the target does less work per "
           f"request outside the poll), seed {group[0].w['seed']}.", ""]
    rows = []
    for r in group:
        side = r.id.split("-", 1)[1]
        for label, fn in (
            ("QD=1 p50 / p99 (us)", lambda p: f"{quant(r.phase(p, 'qd1')['latency'], 'p50')} / "
                                              f"{quant(r.phase(p, 'qd1')['latency'], 'p99')}"),
            ("QD=32 throughput / p99 (us)", lambda p: f"{count(r.phase(p, 'qd32')['throughput'])} / "
                                                      f"{quant(r.phase(p, 'qd32')['latency'], 'p99')}"),
            ("QD=32 interrupts/s (both sides)",
             lambda p: count(r.phase(p, "qd32")["interrupts_per_s"])),
        ):
            rows.append([f"moderated: {side}", label] + [fn(p) for p in r.policies])
    out += md_table(["variant", "metric", *group[0].policies], rows, ["l", "l"] + ["r"] * len(group[0].policies)) + [""]
    out += reproduce(group)
    return out


def trace_target_rows(r):
    """The targets that carry over to a recorded trace: the latency excess over `none` (W1's rule),
    the throughput against the best static profile and kernel DIM (W3's), the change rate and
    limit cycle (W8's)."""
    rows = []
    pols = comparison_policies(r)
    for q in ("p99", "p99.99"):
        rows.append((f"{q} excess over none ≤ +{W1_EXCESS_PCT:g} % or ≤ +{W1_EXCESS_NS / 1e3:g} us "
                     "(W1's rule)", r, {p: excess_cell(r, p, q) for p in pols}))
    best = best_static(r)
    kernel = next((p for p in r.policies if p.startswith("kernel-")), None)
    cells, kcells = {}, {}
    for p in pols:
        t = r.phase(p)["throughput"]
        cells[p] = (f"{count(t)} = {100 * t / best:.1f} % of {count(best)}",
                    t >= W3_OF_BEST_STATIC * best)
        if kernel and not p.startswith("kernel-"):
            k = r.phase(kernel)["throughput"]
            kcells[p] = (f"{100 * t / k:.1f} % of {count(k)}", t >= k)
    rows.append((f"throughput ≥ {100 * W3_OF_BEST_STATIC:g} % of the best static (W3's rule)", r,
                 cells))
    if kcells:
        rows.append(("throughput ≥ kernel DIM's (W3's rule)", r, kcells))
    cells, lc = change_cells(r, pols)
    rows.append((f"changes/s ≤ {CHANGE_BUDGET} (W8's rule)", r, cells))
    rows.append(("no limit cycle (W8's rule)", r, lc))
    return rows


def section_traces(runs, plot):
    group = sorted((r for r in runs.values() if r.base.startswith("trace-")), key=lambda x: x.id)
    if not group:
        return []
    out = ["### Recorded traces — this host's veth traffic (issue 12, item 4)", "",
           "`dimctl sim --trace FILE` replays a `dimctl record` trace (docs/TRACE.md): each "
           "recorded queue's packets arrive inside the 20 ms interval they were counted in, on a "
           "simulated NIC RX queue (table net-eqe, cost model net). The traces are in "
           "tests/fixtures/traces/ (its README says how each was recorded; "
           "`bench/sim/record-veth.sh` records a new one). A trace carries counts per interval, "
           "not packet times: within an interval the arrivals are spread by the simulator, so "
           "these runs show how each policy follows the host's load pattern, not its "
           "sub-millisecond burst structure.", ""]
    for r in group:
        n = r.phase(r.policies[0])["latency"]["count"]
        dur = sum(p["duration_ns"] for p in r.w["phases"]) / 1e9
        out += [r.caption() + f"; {dur:.1f} s, {count(n)} completions per policy.", ""]
        head = ["policy", "p50 (us)", "p99 (us)", "p99.99 (us)", "max (us)", "mean (us)",
                "throughput (/s)", "CPU/IO (us)", "interrupts/s", "changes/s"]
        rows = []
        for p in r.policies:
            m = r.phase(p)
            lat = m["latency"]
            rows.append([p, quant(lat, "p50"), quant(lat, "p99"), quant(lat, "p99.99"),
                         us(lat["max_ns"]) if lat["count"] else "-",
                         us(lat["mean_ns"]) if lat["count"] else "-", count(m["throughput"]),
                         us(m["cpu_per_completion_ns"]), count(m["interrupts_per_s"]),
                         f"{m['changes_per_s']:.1f}"])
        out += md_table(head, rows) + [""]
        out += ["Targets (same rules as above):", ""]
        out += target_table(trace_target_rows(r)) + [""]
        if any(r.by_policy[p].get("windows") for p in r.policies):
            svg = plot.timeline(r, r.id + "-timeline", [], "over the recorded trace")
            out += [f"![{r.id}: profile and latency timeline](sim/{svg})", ""]
    out += reproduce(group)
    return out


def full_report(runs, commit):
    out = ["# Simulator report: every metric of every run", "",
           f"Generated by `bench/sim/run.sh` (`make bench`) at commit `{commit}`; the summary is in "
           "[../BENCHMARKS.md](../BENCHMARKS.md). `*` marks a quantile with fewer than 100 "
           "completions beyond it (not significant). Convergence in ms (`-` not computed, "
           "`never`).", ""]
    for rid in sorted(runs):
        r = runs[rid]
        out += [f"## {rid}", "", r.caption() + ".", "", "```sh", r.cmd, "```", ""]
        for st in r.w["stages"]:
            c = st["cost"]
            out.append(f"- stage {st['name']}: service {st['service']['text']}, servers {st['servers']}"
                       f"{' shared' if st['shared_servers'] else ''}, timer {st['timer']}, poll budget "
                       f"{st['poll_budget']}, {st['cores']} core(s), moderated {str(st['moderated']).lower()}, "
                       f"cost {c['name']} (irq {c['irq_ns']} ns, completion {c['completion_ns']} ns, "
                       f"poll {c['poll_ns']} ns, app {c['app_ns']} ns)")
        out.append("")
        names = r.phase_names() + ([None] if len(r.phase_names()) > 1 else [])
        for ph in names:
            out += [f"**{ph or 'whole run'}**", ""]
            rows = []

            def add(label, fn):
                rows.append([label] + [fn(r.phase(p, ph)) for p in r.policies])
            add("completions", lambda m: count(m["completions"]))
            for q in QUANTILES:
                add(f"latency {q} (us)", lambda m, q=q: quant(m["latency"], q))
            add("latency max (us)", lambda m: us(m["latency"]["max_ns"]))
            add("throughput (/s)", lambda m: count(m["throughput"]))
            add("CPU per completion (us)", lambda m: us(m["cpu_per_completion_ns"]))
            add("CPU busy", lambda m: f"{m['cpu_utilisation'] * 100:.1f} %")
            add("interrupts/s", lambda m: count(m["interrupts_per_s"]))
            add("completions/interrupt", lambda m: f"{m['completions_per_interrupt']:.2f}")
            add("changes/s", lambda m: f"{m['changes_per_s']:.1f}")
            if ph is not None:
                add("convergence (ms)", lambda m: convergence(m["convergence_ns"]))
                add("oracle's choice", lambda m: m.get("oracle_choice", ""))
            flows = r.phase(r.policies[0], ph)["flows"]
            if len(flows) > 1:
                for f in flows:
                    for q in ("p50", "p99", "p99.99"):
                        add(f"flow {f['flow']} {q} (us)",
                            lambda m, f=f, q=q: quant(next(x for x in m["flows"] if x["flow"] == f["flow"])["latency"], q))
            out += md_table(["metric", *r.policies], rows) + [""]
    return out


def report(runs, commit, plot):
    total_completions = sum(x["simulated_completions"] for r in runs.values() for x in r.doc["runs"])
    wall = sum(x["wall_seconds"] for r in runs.values() for x in r.doc["runs"])
    version = next(iter(runs.values())).doc.get("version", "?")
    table_of = {}
    for r in runs.values():
        for p in r.policies:
            table_of.setdefault(p, r.w["table"])
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    out = [BEGIN, "",
           "## Simulator report (generated)", "",
           f"Generated by `make bench` (`bench/sim/run.sh`, `bench/sim/report.py`) at commit "
           f"`{commit}` (dimctl {version}), {now}: {len(runs)} runs of `dimctl sim`, "
           f"{count(total_completions)} simulated completions in {wall:.0f} s of simulation time "
           "(summed over runs). The simulation is deterministic: the same commit and seeds give "
           "the same numbers on any machine. Every metric of every phase: "
           "[sim/full-report.md](sim/full-report.md).", "",
           "Everything below is a simulation under the stated cost models (docs/SIMULATOR.md): it "
           "shows directions and mechanisms, not what a given NIC or HCA will do "
           "(performance-research 6.6). Quantiles marked `*` have fewer than 100 completions "
           "beyond them (performance-research 5.3) and are not significant. One seed per workload, "
           "common random numbers across policies (every policy sees the same arrivals and "
           "service times), so differences between columns are paired, not noise.", "",
           "Policies:", ""]
    for p in sorted(table_of, key=lambda x: (x != "none", not x.startswith("static"), x)):
        out.append(f"- `{p}`: {policy_text(p, table_of[p])}")
    out.append("")
    out += section_targets(runs)
    out += section_w1(runs, plot)
    out += section_w2(runs, plot)
    out += section_w3(runs)
    out += section_adapt(runs, plot)
    out += section_w6(runs)
    out += section_w7(runs)
    out += section_traces(runs, plot)
    out += ["### Not answered here", "",
            "- Real NVMe devices (review question 4): the W1 service time is log-normal "
            "(NVMe-like), not a device. No NIC or HCA with real moderation is available here.",
            "- Confidence intervals over ≥ 10 seeds (performance-research 5.3): one seed per "
            "workload (the tail quantiles rest on 10^5 to 10^7 completions instead).",
            "- Cost models are assumptions within performance-research section 4's ranges, not "
            "measurements of a host; the 64k link bound is modelled, not measured.", "", END]
    return out


def replace_section(markdown, lines):
    path = pathlib.Path(markdown)
    text = path.read_text() if path.exists() else ""
    section = "\n".join(lines)
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        _, tail = rest.split(END, 1)
        text = head + section + tail
    else:
        text = text.rstrip("\n") + ("\n\n" if text else "") + section + "\n"
    path.write_text(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", required=True, help="directory with manifest.tsv and ID.json files")
    ap.add_argument("--commit", required=True)
    ap.add_argument("--markdown", required=True)
    ap.add_argument("--figures", required=True)
    a = ap.parse_args()
    runs = load_runs(a.runs)
    if not runs:
        print("report.py: no runs", file=sys.stderr)
        return 1
    plot = Plotter(a.figures, a.commit)
    lines = report(runs, a.commit, plot)
    replace_section(a.markdown, lines)
    (pathlib.Path(a.figures) / "full-report.md").write_text("\n".join(full_report(runs, a.commit)) + "\n")
    print(f"report.py: {a.markdown} (section {BEGIN}..{END}), {a.figures}/full-report.md, "
          f"{len(plot.made)} figures: {', '.join(plot.made)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
