"""Sections: the markdown of each workload group (W1-W8, the recorded traces), its tables and
figures."""
from .markdown import QUANTILES, convergence, count, md_table, pct, quant, reproduce, us
from .targets import best_static, target_table, trace_target_rows

# The founding series' table (performance-research A1-A3: rdma_dim cover letter, 512B/4k/64k
# reads, IOPS before -> after).
SEED_IOPS = {"512B": (7.7e6, 8.2e6), "4k": (1.8e6, 2.65e6), "64k": (175e3, 175e3)}


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
        out += [f"![{rid}: QD=1 latency tail to p99.999 and max]({plot.link}{svg})", ""]
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
        out += [f"![{rid}: p99 latency vs throughput]({plot.link}{svg})", ""]
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
        out += [f"![{r.id}: profile and latency timeline]({plot.link}{svg})", ""]
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


def section_software(runs):
    """Software moderation (a stage's `software:`): the host benchmark's shapes."""
    group = [runs[k] for k in ("h1-napi-pingpong", "h2-napi-rates", "h3-napi-flood") if k in runs]
    if not group:
        return []
    w = group[0].w
    stage = w["stages"][0]
    sw = stage.get("software", {})
    defer = sw.get("defer_hard_irqs", "?")
    host_side = (f"the timer's re-poll {us(sw.get('timer_latency_ns', 0))} us late and "
                 f"{us(sw.get('timer_cost_ns', 0))} us of CPU per armed timer")
    out = ["### Software moderation — a veth NAPI under napi-set", "",
           "A NAPI without hardware coalescing (veth, virtio-net) moderated by the kernel's "
           "software deferral: armed, it polls at once; after a poll with work the interrupt "
           "stays masked and a timer of `gro-flush-timeout` polls again, and "
           f"`defer-hard-irqs` ({defer} here, dimctl's default) empty re-polls re-arm it "
           "(`napi_complete_done()`, docs/SIMULATOR.md). The profile's timer is the "
           "`gro-flush-timeout` (net-eqe `static:1`/`2`/`3` = 8/64/128 µs), as dimctl's "
           "`method: napi` writes it. The shapes mirror `make bench-host` on this host's kernel "
           "(docs/BENCHMARKS.md, \"Measured on this host's kernel\"): QD=1 ping-pong, "
           "paced rates, a flood; cost model "
           f"**{w['cost_model']}** and {host_side}, all fitted to the reference VM "
           f"(docs/benchmarks/host.md), seed {w['seed']}.", "",
           "Traffic slower than one message per timeout pays no delay and costs an extra empty "
           "poll per message (and an armed timer); traffic faster than that never interrupts "
           "again and waits for the timer's poll: about half a timeout when open loop, the "
           "timeout (plus the timer's lateness) minus its own round trip in a QD=1 loop.", ""]
    rows = []
    h1 = runs.get("h1-napi-pingpong")
    if h1:
        for policy in h1.policies:
            lat = h1.phase(policy)["latency"]
            p = h1.phase(policy)
            rows.append(["QD=1 ping-pong", policy, quant(lat, "p50"), quant(lat, "p99"),
                         quant(lat, "p99.99"), us(lat["max_ns"]), count(p["throughput"]),
                         count(p["interrupts_per_s"]),
                         f"{p['polls'] / max(p['completions'], 1):.2f}",
                         us(p["cpu_per_completion_ns"])])
    h2 = runs.get("h2-napi-rates")
    if h2:
        src = h2.w["sources"][0]
        kind = "paced" if src.get("periodic") else "Poisson"
        for ph in h2.phase_names():
            for policy in h2.policies:
                p = h2.phase(policy, ph)
                lat = p["latency"]
                rows.append([f"{ph}/s {kind}", policy, quant(lat, "p50"), quant(lat, "p99"),
                             quant(lat, "p99.99"), us(lat["max_ns"]), count(p["throughput"]),
                             count(p["interrupts_per_s"]),
                             f"{p['polls'] / max(p['completions'], 1):.2f}",
                             us(p["cpu_per_completion_ns"])])
    h3 = runs.get("h3-napi-flood")
    if h3:
        for policy in h3.policies:
            p = h3.phase(policy)
            lat = p["latency"]
            rows.append(["flood 150k/s", policy, quant(lat, "p50"), quant(lat, "p99"),
                         quant(lat, "p99.99"), us(lat["max_ns"]), count(p["throughput"]),
                         count(p["interrupts_per_s"]),
                         f"{p['polls'] / max(p['completions'], 1):.2f}",
                         us(p["cpu_per_completion_ns"])])
    out += md_table(["shape", "policy", "p50 (us)", "p99 (us)", "p99.99 (us)", "max (us)",
                     "throughput (/s)", "interrupts/s", "polls/msg", "CPU/msg (us)"], rows,
                    ["l", "l"] + ["r"] * 8) + [""]
    out += reproduce(group)
    return out


def section_traces(runs, plot, ctl):
    group = sorted((r for r in runs.values() if r.base.startswith("trace-")), key=lambda x: x.id)
    if not group:
        return []
    # The interval each trace was recorded at (its frames'), as `dimctl sim` read it.
    intervals = sorted({r.doc["trace"]["interval_ns"] for r in group})
    interval = " or ".join(f"{x / 1e6:g} ms" for x in intervals)
    out = ["### Recorded traces — this host's veth traffic", "",
           "`dimctl sim --trace FILE` replays a `dimctl record` trace (docs/TRACE.md): each "
           f"recorded queue's packets arrive inside the {interval} interval they were counted "
           "in, on a simulated NIC RX queue (table net-eqe, cost model net). The traces are in "
           "tests/fixtures/traces/ (its README says how each was recorded; "
           "`bench/sim/record-veth.sh` records a new one). A trace carries counts per interval, "
           "not packet times: within an interval the arrivals are spread by the simulator, so "
           "these runs show how each policy follows the host's load pattern, not its "
           "sub-millisecond burst structure. A trace recorded with CPU times (format 2) is "
           "replayed a second time at the recording host's own costs (`-host-costs`, `--cost "
           "trace`, cost model **trace**): the daemon's estimator run over the trace "
           "(`dimctl trace costs`) gives the interrupt and completion costs the simulator "
           "charges.", ""]
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
        out += target_table(trace_target_rows(r, ctl)) + [""]
        if any(r.by_policy[p].get("windows") for p in r.policies):
            svg = plot.timeline(r, r.id + "-timeline", [], "over the recorded trace")
            out += [f"![{r.id}: profile and latency timeline]({plot.link}{svg})", ""]
    out += reproduce(group)
    return out



def budget_ns(policy):
    """The latency budget of a `dimctl-model*-eff:BUDGET[@PERIOD]` policy, in ns."""
    text = policy.split("-eff:", 1)[1].split("@", 1)[0]
    for unit, scale in (("ns", 1), ("us", 1e3), ("ms", 1e6), ("s", 1e9)):
        if text.endswith(unit) and text[:-len(unit)].replace(".", "", 1).isdigit():
            return float(text[:-len(unit)]) * scale
    return 0.0


def best_static_within(run, budget, phase=None):
    """The static column (`none` is profile-less no moderation, a static too) with the least CPU
    per completion whose mean latency exceeds `none`'s by at most `budget` ns; None without one."""
    base = run.phase("none", phase)["latency"]["mean_ns"]
    cands = [p for p in run.policies if p == "none" or p.startswith("static:")]
    within = [p for p in cands if run.phase(p, phase)["completions"] > 0 and
              run.phase(p, phase)["latency"]["mean_ns"] - base <= budget]
    return min(within, key=lambda p: run.phase(p, phase)["cpu_per_completion_ns"], default=None)


def section_efficiency(runs):
    """The efficiency family (e*): CPU per completion against added mean latency, per policy."""
    group = sorted((r for r in runs.values() if r.base[:1] == "e" and r.base[1:2].isdigit()
                    and "none" in r.by_policy), key=lambda x: x.id)
    if not group:
        return []
    out = ["### Efficiency — CPU per completion within a latency budget", "",
           "The model policy under the efficiency objective (`dimctl-model-eff:B`: "
           "`model.objective: efficiency`, `model.latency_budget: B`) beside the latency objective "
           "(`dimctl-model`), the static profiles, kernel DIM and dimctl's DIM. **+mean** is the "
           "mean latency over `none`'s (no moderation) on the same arrivals; **best static ≤ B** "
           "is the static column (`none` included) with the least CPU per completion whose "
           "+mean is at most B, what a fixed choice made in hindsight would pay within the "
           "budget. Under overload `none` builds a backlog, so +mean is negative there.", ""]
    for r in group:
        eff = [p for p in r.policies if "-eff:" in p]
        out += [r.caption() + ".", ""]
        none = r.phase("none")
        rows = []
        for p in r.policies:
            t = r.phase(p)
            lat = t["latency"]
            rows.append([p, count(t["throughput"]), us(lat["mean_ns"]),
                         f"{(lat['mean_ns'] - none['latency']['mean_ns']) / 1e3:+.2f}",
                         quant(lat, "p99"), us(t["cpu_per_completion_ns"]),
                         pct(t["cpu_per_completion_ns"], none["cpu_per_completion_ns"]),
                         f"{t['completions_per_interrupt']:.2f}", f"{t['changes_per_s']:.1f}"])
        out += md_table(["policy", "throughput (/s)", "mean (us)", "+mean (us)", "p99 (us)",
                         "CPU/completion (us)", "CPU vs none", "completions/interrupt",
                         "changes/s"], rows) + [""]
        cols = [p for p in r.policies if p.startswith("dimctl-model") and "-eff:" not in p]
        head, cells = ["phase"], []
        for p in cols:
            head.append(f"{p}")
        for p in eff:
            head += [p, f"best static ≤ {p.split('-eff:', 1)[1]}"]
        names = r.phase_names() + ([None] if len(r.phase_names()) > 1 else [])
        for ph in names:
            base = r.phase("none", ph)["latency"]["mean_ns"]

            def cell(p, ph=ph, base=base):
                m = r.phase(p, ph)
                return (f"{us(m['cpu_per_completion_ns'])} / "
                        f"{(m['latency']['mean_ns'] - base) / 1e3:+.1f}")
            row = [ph or "whole run"] + [cell(p) for p in cols]
            for p in eff:
                best = best_static_within(r, budget_ns(p), ph)
                row += [cell(p), f"{best}: {cell(best)}" if best else "-"]
            cells.append(row)
        out += ["Per phase, CPU per completion (us) / +mean (us):", ""]
        out += md_table(head, cells) + [""]
    out += reproduce(group)
    return out
