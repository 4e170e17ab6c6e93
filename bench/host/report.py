#!/usr/bin/env python3
"""bench/host/report.py: tables and plots from bench/host/run.py's JSON (and the simulator's).

    bench/host/report.py --runs RUN.json [RUN.json ...] [--sim-dir DIR] [--markdown FILE]
                         [--figures DIR] [--commit C]

Medians over the repetitions of each policy, with min..max beside them. First the headline:
the efficiency objective (dimctl-model-effB) against the best fixed setting within its budget,
per offered rate and budget, from per-repetition comparisons. Without --markdown the section is
printed; with it, the part of FILE between <!-- host:begin --> and <!-- host:end --> is
replaced. --figures draws SVGs with gnuplot (latency and CPU per message against the offered
rate, one line per policy; the efficiency objective's CPU per message against the best fixed
setting's). --sim-dir holds `dimctl sim --json` outputs of the h1/h2/h3 workloads
(bench/sim/workloads/h*-napi-*.yaml), put beside the host's figures. Python 3 standard library
only.
"""
import argparse
import collections
import json
import os
import re
import shutil
import statistics
import subprocess
import sys

from run import EFFICIENCY, STATIC, sim_policy

ORDER = ["none", "static:1", "static:2", "static:3", "dimctl-net-eqe", "dimctl-model",
         "dimctl-net-eqe-idle0", "dimctl-model-idle0"]
# Older runs' names: static:IX were the net-eqe profiles of the table of the time.
LABEL = {"none": "none", "static:1": "static 8 µs", "static:2": "static 64 µs",
         "static:3": "static 128 µs", "dimctl-net-eqe": "dimctl net DIM (EQE)",
         "dimctl-model": "dimctl model", "dimctl-net-eqe-idle0": "dimctl net DIM, profile 0 off",
         "dimctl-model-idle0": "dimctl model, profile 0 off"}
# The targets the efficiency objective is held to (docs/benchmarks/host.md, "Headline").
TARGET_CPU_RATIO = 1.10
TARGET_CHANGES_PER_S = 1.0
SIM_FILES = {"pingpong": "h1-napi-pingpong.json", "underload": "h2-napi-rates.json",
             "throughput": "h3-napi-flood.json"}


def load(paths):
    runs, meta = [], []
    for i, p in enumerate(paths):
        with open(p) as f:
            d = json.load(f)
        meta.append(d)
        # Repetitions are numbered per file: the headline pairs runs of one file's repetition.
        runs += [dict(r, _file=i) for r in d["runs"]]
    return runs, meta


def label(p):
    if p in LABEL:
        return LABEL[p]
    m = STATIC.fullmatch(p)
    if m:
        return f"static {m.group(1)} µs"
    m = EFFICIENCY.fullmatch(p)
    if m:
        return f"dimctl model, efficiency {m.group(1)} µs"
    return p


def order_key(p):
    """none, the static timeouts by length, the daemons, the efficiency budgets by size."""
    m = STATIC.fullmatch(p)
    if m:
        return (1, int(m.group(1)), p)
    m = EFFICIENCY.fullmatch(p)
    if m:
        return (3, int(m.group(1)), p)
    if p in ORDER:
        return (0 if p == "none" else 1 if p.startswith("static:") else 2, ORDER.index(p), p)
    return (4, 0, p)


def policies_of(runs):
    return sorted({r["policy"] for r in runs}, key=order_key)


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
    runs = sim.get(kind, {})
    # The simulator's name for a host policy (static-64us is its static:2); older runs used its.
    r = runs.get(policy) or runs.get(sim_policy(policy)[0])
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


# ---- the headline: the efficiency objective against the best fixed setting ---------------------

def loads_of(meta):
    """(name, picker) of every run kind a headline row stands for: QD=1, each rate, the flood."""
    out = [("QD=1", lambda r: r["pingpong"])]
    out += [(f"{rate_name(rt)}/s", lambda r, rt=rt: r["underload"][rt]) for rt in rates_of(meta)]
    out.append(("flood", lambda r: r["throughput"]))
    return out


def by_repeat(runs, policy, pick):
    """{(file, repetition): the run} of a policy: comparisons pair runs of one repetition."""
    return {(r.get("_file", 0), r["repeat"]): pick(r) for r in runs if r["policy"] == policy}


def setting_name(cfgs):
    """The NAPI's setting as read back (one NAPI on veth): `none` or the timeout."""
    if not cfgs:
        return "?"
    names = []
    for c in cfgs:
        d, t = c["defer_hard_irqs"], c["gro_flush_timeout_ns"]
        names.append("none" if (d, t) == (0, 0) else
                     f"{t / 1e3:g} µs" + (f" ×{d}" if d != 1 else ""))
    return "/".join(sorted(set(names)))


def held(test):
    """What the NAPI held during a run: the settings read back while it went (older runs: after
    it), `a/b` when it moved."""
    samples = [x["config"] for x in test.get("napi_during", [])] or [test.get("napi_config")]
    names = {setting_name(c) for c in samples if c}
    return "/".join(sorted(names, key=lambda n: (n != "none", float(n.split()[0])
                                                 if n[0].isdigit() else 0))) or "?"


def modal(names):
    """The most frequent name, with k/n when not every repetition agrees."""
    if not names:
        return "–"
    counts = collections.Counter(names).most_common()
    name, k = counts[0]
    return name if k == len(names) else f"{name} ({k}/{len(names)})"


def noise_band(base):
    """`none`'s p50 noise: the median absolute difference between consecutive repetitions."""
    keys = sorted(k for k, t in base.items() if pct(t, "50.000") is not None)
    diffs = [abs(pct(base[b], "50.000") - pct(base[a], "50.000")) for a, b in zip(keys, keys[1:])]
    return statistics.median(diffs) if diffs else None


def headline_cells(runs, meta):
    """One dict per (load, budget): the per-repetition comparisons and their medians."""
    pols = policies_of(runs)
    fixed = [p for p in pols if p == "none" or STATIC.fullmatch(p)]
    effs = [p for p in pols if EFFICIENCY.fullmatch(p)]
    if "none" not in pols or not effs:
        return []
    out = []
    for load, pick in loads_of(meta):
        base = by_repeat(runs, "none", pick)
        fx = {p: by_repeat(runs, p, pick) for p in fixed}
        has_latency = load != "flood"
        noise = noise_band(base) if has_latency else None
        for eff in effs:
            budget = int(EFFICIENCY.fullmatch(eff).group(1))
            rows = []
            for key, e in sorted(by_repeat(runs, eff, pick).items()):
                if key not in base:
                    continue
                b50 = pct(base[key], "50.000")
                if has_latency and b50 is None:
                    continue
                cands = []
                for p in fixed:
                    t = fx[p].get(key)
                    if t is None:
                        continue
                    if has_latency:
                        p50 = pct(t, "50.000")
                        if p50 is None or p50 - b50 > budget:
                            continue
                    cands.append((t["cpu_us_per_msg"], p))
                best_cpu, best = min(cands)
                rows.append({"eff_cpu": e["cpu_us_per_msg"], "best": best, "best_cpu": best_cpu,
                             "ratio": e["cpu_us_per_msg"] / best_cpu if best_cpu else None,
                             "added": pct(e, "50.000") - b50 if has_latency and
                             pct(e, "50.000") is not None else None,
                             "changes": e.get("changes_per_s"),
                             "changes_source": e.get("changes_source"),
                             "daemon_cpu": e.get("daemon_us_per_msg"),
                             "wrote": held(e)})
            if not rows:
                continue

            def med(k, rows=rows):
                v = [r[k] for r in rows if r[k] is not None]
                return statistics.median(v) if v else None
            c = {"load": load, "budget": budget, "policy": eff, "n": len(rows),
                 "eff_cpu": med("eff_cpu"), "best_cpu": med("best_cpu"), "ratio": med("ratio"),
                 "added": med("added"), "noise": noise, "changes": med("changes"),
                 "daemon_cpu": med("daemon_cpu"),
                 "sources": sorted({r["changes_source"] for r in rows if r["changes_source"]}),
                 "best": modal([label(r["best"]) for r in rows]),
                 "best_name": collections.Counter(r["best"] for r in rows).most_common(1)[0][0],
                 "wrote": modal([r["wrote"] for r in rows]),
                 "wrote_all": sorted({r["wrote"] for r in rows})}
            c["why"] = why(c)
            out.append(c)
    return out


def why(c):
    """What misses a target, derived from the cell's medians; empty when every target is met."""
    out = []
    if c["added"] is not None:
        allowed = c["budget"] + (c["noise"] or 0)
        if c["added"] > allowed:
            out.append(f"p50 over budget by {c['added'] - allowed:.1f} µs (+{c['added']:.1f} "
                       f"over none; budget {c['budget']} + noise {c['noise'] or 0:.1f})")
    if c["ratio"] is not None and c["ratio"] > TARGET_CPU_RATIO:
        saving = 1 - c["best_cpu"] / c["eff_cpu"] if c["eff_cpu"] else 0
        best = label(c["best_name"])
        wrote = c["wrote"].split(" (")[0]
        if best in (wrote, f"static {wrote}"):
            out.append(f"held {wrote} as {best} does, {c['ratio'] - 1:.0%} more CPU/msg "
                       f"(daemon {c['daemon_cpu'] or 0:.1f} µs/msg)")
        else:
            out.append(f"held {wrote} while {best} within budget saves {saving:.0%}")
    if c["changes"] is not None and c["changes"] > TARGET_CHANGES_PER_S:
        out.append(f"{c['changes']:.1f} changes/s (held {', '.join(c['wrote_all'])})")
    return "; ".join(out)


def headline(runs, meta):
    cells = headline_cells(runs, meta)
    if not cells:
        return []
    reps = max(c["n"] for c in cells)
    sources = sorted({s for c in cells for s in c["sources"]})
    out = ["**Headline: the efficiency objective against the best fixed setting within its "
           "budget.** Per offered load and latency budget B (`dimctl-model-effB`: "
           "`model: {objective: efficiency, latency_budget: B}`), each repetition compared "
           "within itself: the best fixed setting is the one of `none` and the static timeouts "
           "with the least CPU per message whose p50 is at most B above `none`'s p50 in the same "
           "repetition (the flood measures no latency: the least CPU of all of them). Cells: "
           f"medians over {reps} repetition{'s' if reps != 1 else ''} (best fixed: the most "
           "frequent, k/n when they differ; it held: the NAPI's setting read back during "
           "efficiency's run); ratio: the median of the per-repetition ratios "
           "of CPU per message, efficiency over best fixed; added p50: efficiency's p50 minus "
           "`none`'s; noise band: the median absolute difference of `none`'s p50 between "
           "consecutive repetitions (– with one repetition, taken as 0); changes/s: the "
           "written setting's changes per second during the run, "
           + ("the daemon's own count of its writes (`dimctl_apply_total`, result ok, read "
              "from its metrics endpoint just before and after the run, onset included)"
              if sources == ["daemon"] else
              "the read-back of the NAPI before and after the run (the daemon's endpoint was "
              "not reachable: at most one change seen)" if sources == ["readback"] else
              "the daemon's write count where its endpoint answered, else the read-back")
           + f". Targets: CPU ≤ {TARGET_CPU_RATIO:.2f}× best fixed, added p50 ≤ B + noise band, "
           f"≤ {TARGET_CHANGES_PER_S:g} change/s; \"why\" says what misses.", ""]
    rows = []
    for c in cells:
        rows.append([c["load"], f"{c['budget']} µs", f"{c['eff_cpu']:.1f}", c["wrote"],
                     c["best"],
                     f"{c['best_cpu']:.1f}",
                     f"{c['ratio']:.2f}" if c["ratio"] is not None else "–",
                     f"{c['added']:+.1f}" if c["added"] is not None else "–",
                     f"{c['noise']:.1f}" if c["noise"] is not None else "–",
                     f"{c['changes']:.2f}" if c["changes"] is not None else "–",
                     c["why"] or "–"])
    out.append(table(["offered", "budget", "efficiency CPU µs/msg", "it held",
                      "best fixed within budget", "its CPU µs/msg", "ratio", "added p50 µs",
                      "noise band µs", "changes/s", "why"], rows))
    out.append("")
    return out


def changes_table(runs, meta):
    daemons = [p for p in policies_of(runs)
               if any("changes_per_s" in r["pingpong"] for r in runs if r["policy"] == p)]
    if not daemons:
        return []
    loads = loads_of(meta)
    out = ["**Changes of the written setting per second** (daemon policies; the daemon's count "
           "of its writes during each run, or the NAPI's read-back where its endpoint did not "
           "answer):", ""]
    rows = []
    for p in daemons:
        rows.append([label(p)] + [fmt(stat([t.get("changes_per_s")
                                            for t in tests_of(runs, p, pick)]), 2)
                                  for _, pick in loads])
    out.append(table(["policy"] + [name for name, _ in loads], rows))
    out.append("")
    limited = [[label(p)] + [fmt(stat([t["daemon_apply"].get("rate_limited", 0) / t["seconds"]
                                       for t in tests_of(runs, p, pick) if "daemon_apply" in t]),
                                 2) for _, pick in loads] for p in daemons]
    if any(c not in ("0.00", "–") for row in limited for c in row[1:]):
        out.append("Control periods in which the daemon wanted another setting but held the "
                   "write back, under the rule's `rate_limit` (100 ms between writes by default; "
                   "`dimctl_apply_total`, result rate_limited), per second:")
        out.append("")
        out.append(table(["policy"] + [name for name, _ in loads], limited))
        out.append("")
    return out


# ---- sections -----------------------------------------------------------------------------------

def section(runs, meta, sim, figures_rel, figures_dir=None):
    pols = policies_of(runs)
    rates = rates_of(meta)
    reps = max(r["repeat"] for r in runs) + 1
    out = []
    m0 = meta[0]
    skipped = {}
    for m in meta:
        skipped.update(m.get("skipped", {}))
    out.append(
        f"Host kernel {m0['host']}, {m0['started']}; {reps} "
        f"repetition{'s' if reps != 1 else ''} of every policy, "
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
        out.append("What the daemon policies wrote, read back during and after every run "
                   "(defer-hard-irqs, "
                   "gro-flush-timeout µs): " + "; ".join(
                       f"`{p}` " + ", ".join(f"({d}, {t / 1e3:g})" for d, t in sorted(v))
                       + (" — **nothing: these rows are `none` plus the daemon's CPU**"
                          if v == {(0, 0)} else "")
                       for p, v in wrote.items()) + ".")
        out.append("")

    out += headline(runs, meta)
    if figures_rel and os.path.exists(os.path.join(figures_dir, "host-efficiency.svg")):
        out.append(f"![efficiency vs best fixed, CPU per message]"
                   f"({figures_rel}/host-efficiency.svg)")
        out.append("")

    # QD=1 ping-pong
    out.append("**QD=1 ping-pong** (round trip, µs; sockperf ping-pong; CPU per round trip: "
               "NET_RX softirq time on both cores plus the sockperf processes' system time "
               "and the daemon's CPU; NET_RX runs per round trip)")
    out.append("")
    rows = []
    for p in pols:
        t = tests_of(runs, p, lambda r: r["pingpong"])
        rows.append([label(p)] + [fmt(stat([pct(x, k) for x in t])) for k in
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
            rows.append([label(p)] + [
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
        rows.append([label(p)] + [
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
        rows.append([label(p)] + [
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
        rows.append([label(p), fmt(stat([x["received_per_s"] for x in t]), 0),
                     fmt(stat([x.get("send_rate") for x in t]), 0),
                     fmt(stat([x["rcvbuf_errors"] / max(x.get("total_run_s") or 1, 1e-9)
                               for x in t]), 0),
                     fmt(stat([x["cpu_us_per_msg"] for x in t]))])
    out.append(table(["policy", "received/s", "sent/s", "dropped (rcvbuf)/s", "CPU µs/msg"],
                     rows))
    out.append("")

    out += changes_table(runs, meta)

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
            cells.append(f"{label(best[2])} {best[0]:.1f}"
                         + (f" (≈ {label(scores[1][2])})" if tie else ""))
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
        cells = [label(p)]
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
        cells = [label(p)]
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
            series.append((i, label(p)))
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
    scripts = [lat, cpu]
    # The headline as a figure: per budget, the efficiency objective's CPU per message (solid)
    # and the best fixed setting's within that budget (dashed), per offered load.
    eff_svg = os.path.join(out_dir, "host-efficiency.svg")
    cells = headline_cells(runs, meta)
    eff_data = os.path.join(out_dir, "host-efficiency-data.tmp")
    if cells:
        budgets = sorted({c["budget"] for c in cells})
        with open(eff_data, "w") as f:
            for b in budgets:
                f.write(f"# budget {b} us\n")
                for i, (load, _) in enumerate(loads_of(meta)):
                    c = next((c for c in cells if c["budget"] == b and c["load"] == load), None)
                    if c:
                        f.write(f"{i} \"{load}\" {c['eff_cpu']} {c['best_cpu']}\n")
                f.write("\n\n")
        scripts.append(
            "set terminal svg size 760,420 dynamic font 'sans,11'\n"
            f"set output '{eff_svg}'\nset logscale y\nset key outside right\nset grid\n"
            "set offsets 0.3, 0.3, 0, 0\n"
            "set xlabel 'offered load'\nset ylabel 'CPU per message (µs)'\n"
            "set title 'efficiency objective (solid) vs best fixed setting within the budget "
            "(dashed)'\n"
            "plot " + ", ".join(
                f"'{eff_data}' index {i} using 1:3:xtic(2) with linespoints lc {i + 1} dt 1 "
                f"title 'efficiency, {b} µs', '{eff_data}' index {i} using 1:4 with "
                f"linespoints lc {i + 1} dt 2 title 'best fixed ≤ {b} µs'"
                for i, b in enumerate(budgets)) + "\n")
    elif os.path.exists(eff_svg):
        os.remove(eff_svg)  # from another run: the section would show it
    ok = True
    for script in scripts:
        r = subprocess.run(["gnuplot"], input=script, text=True, capture_output=True)
        if r.returncode != 0:
            print(f"bench/host/report.py: gnuplot: {r.stderr[:300]}", file=sys.stderr)
            ok = False
    os.remove(data)
    if cells:
        os.remove(eff_data)
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
    text = section(runs, meta, sim, rel, a.figures)
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
