"""Targets: the model policy's targets, the verdicts per run and role, and the
mechanism behind a missed row, all computed from the runs' JSON."""
from .markdown import count, md_table, quant, us


# The model policy's targets (docs/CONTROLLER.md "The cost-model policy"). These
# are the targets' definitions; every figure compared against them comes from the JSON, and so
# do the control period and the change budget they are measured in (load.Controller, `ctl`
# below).
W1_EXCESS_PCT, W1_EXCESS_NS = 2.0, 500  # excess over `none`: met when within either bound
W3_OF_BEST_STATIC = 0.98
W5_PERIODS = 2
W5_MIN_STEADY_PERIODS = 5  # a phase must leave this many control periods to judge settling
# What a policy settles on must be good: the phase's p99 within 10 % of the oracle's.
W5_P99_OF_ORACLE = 1.10
LIMIT_CYCLE_RATE = 1.0  # changes/s in the steady half above which a policy has not settled


def is_efficiency(policy):
    """A model policy run under the efficiency objective (dimctl-model*-eff:BUDGET)."""
    return policy.startswith("dimctl-model") and "-eff:" in policy


def role(policy):
    """The column a policy's figures go to in the target tables (None: not judged there). The
    model under the efficiency objective (`dimctl-model*-eff:B`) is judged by its own section,
    not by the latency objective's targets."""
    if is_efficiency(policy):
        return None
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


def best_static_column(run, phase=None, oracle=True):
    """The static column (the oracle counts as one per phase unless `oracle` is false) that
    completed the most, or None without one."""
    cands = [p for p in run.policies if p.startswith("static:") or (oracle and p == "oracle")]
    return max(cands, key=lambda p: run.phase(p, phase)["throughput"]) if cands else None


def best_static(run, phase=None):
    """The best static profile's throughput: the most any static column (the oracle is one per
    phase) completed."""
    top = best_static_column(run, phase)
    return run.phase(top, phase)["throughput"] if top else 0.0


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


def limit_cycle(run, policy, budget):
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
               or run.phase(policy)["changes_per_s"] > budget)
    return rate, amp, cycling


def change_cells(r, pols, ctl):
    """W8's two judgements per policy: (changes/s cells, limit-cycle cells)."""
    cells, lc = {}, {}
    for p in pols:
        c = r.phase(p)["changes_per_s"]
        cells[p] = (f"{c:.1f}/s", c <= ctl.change_budget)
        x = limit_cycle(r, p, ctl.change_budget)
        if x is None:
            lc[p] = ("-", None)
        else:
            rate, amp, cyc = x
            lc[p] = (f"{'cycle' if cyc else 'none'}: {rate:.1f}/s in the second half, "
                     f"amplitude {amp}", not cyc)
    return cells, lc


def target_rows(runs, ctl):
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
            if i == 0 or end - start < W5_MIN_STEADY_PERIODS * ctl.period_ns:
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
                cells[p] = (f"{s / ctl.period_ns:.1f} ({s / 1e6:.0f} ms) → {held}{rel}",
                            s <= W5_PERIODS * ctl.period_ns and good)
            rows.append((f"W5 settles ≤ {W5_PERIODS} control periods after a step ({step} "
                         f"{rate}, phase {ph['name']}; oracle {oracle or '-'})", r, cells))
    # W8: change rate and limit cycles under periodic load.
    for r in sorted((r for r in runs.values() if r.base.startswith("w8-")), key=lambda r: r.id):
        cells, lc = change_cells(r, comparison_policies(r), ctl)
        rows.append((f"W8 changes/s ≤ {ctl.change_budget} (the model's change budget)", r, cells))
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


def section_targets(runs, ctl):
    rows = target_rows(runs, ctl)
    if not rows:
        return []
    model = [p for r in runs.values() for p in r.policies if role(p) in ("dimctl-model",
                                                                         "dimctl-model-host")]
    out = ["### Targets of the model policy", "",
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
           f"{ctl.period_ns // 10**6} ms control periods, on every phase after the first "
           f"that lasts at least {W5_MIN_STEADY_PERIODS * ctl.period_ns // 10**6} ms (the 10 ms "
           "steps are shorter than a decision); met "
           f"at ≤ {W5_PERIODS} periods when what the policy settles on is good: the phase's p99 "
           f"at most {W5_P99_OF_ORACLE:g}× the oracle's (a policy that never moves settles at "
           "once, and is judged by that). The cell gives the settling time in periods (ms), the "
           "profile held at the phase's end and the p99 against the oracle's; the row names "
           "the oracle's choice. The latency-based convergence of the W5 tables below (every 1 ms "
           "window within ±10 % of the oracle) is stricter and noisier at the low rates.",
           f"- **W8**: changes/s over the whole run, met at ≤ {ctl.change_budget} (the model's "
           "default change budget, `max_changes_per_s`); a **limit cycle** is a policy still "
           f"changing profile at ≥ {LIMIT_CYCLE_RATE:g} change/s through the second half of the "
           "periodic run (where the load is steady in distribution, so a settled policy holds "
           f"one profile), or one above {ctl.change_budget} changes/s over the run; the cell gives "
           "the second half's change rate and the range of profiles it visits (amplitude).",
           ""]
    if not model:
        out += ["(No run includes `dimctl-model`: this dimctl does not know it.)", ""]
    out += target_table(rows) + [""]
    out += target_summary(runs, rows, ctl)
    return out


def model_costs_us(run, policy, ctl):
    """(per completion, per interrupt) in us the model policy judged with at the end of the run,
    and where they come from: for dimctl-model-host the moderated stage's cost model (completion
    + app, irq + poll); for the default config the costs its cores measured (the run's
    `model_cores`, the first core that has an estimate), the defaults while none had one."""
    if policy.startswith("dimctl-model-host"):
        c = run.w["stages"][0]["cost"]
        return ((c["completion_ns"] + c["app_ns"]) / 1e3, (c["irq_ns"] + c["poll_ns"]) / 1e3,
                "told")
    for core in run.by_policy[policy].get("model_cores") or []:
        if core["confidence"] > 0 and core["completion_cost_ns"] > 0:
            return (round(core["completion_cost_ns"] / 1e3, 2),
                    round(core["interrupt_cost_ns"] / 1e3, 2), "measured, at the run's end")
    cc, ci = ctl.model_costs_us
    return cc, ci, "defaults"


def last_change(run, policy):
    """(profile, t_ns) of queue 0's last profile change in the windows (t of the first window
    at the profile it ends at)."""
    win = run.by_policy[policy].get("windows") or {}
    last, since = None, 0
    for t, p in zip(win.get("t_ns", []), win.get("profile", [])):
        if p != last:
            last, since = p, t
    return last, since


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


def target_summary(runs, rows, ctl):
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
            cc, ci, src = model_costs_us(r, name, ctl)
            if r.w["queues"] <= st["cores"]:
                best = best_static(r)
                last, since = last_change(r, name)
                c = st["cost"]
                top = best_static_column(r, oracle=False)
                lead = (f"- Why `{r.id}`: here each queue has a core of its own and `{name}` "
                        f"moves (profiles {held}, at {last} from {since / 1e6:g} ms) but reaches "
                        f"{count(m['throughput'])} = {100 * m['throughput'] / best:.1f} % of the "
                        "best static profile")
                top_ix = int(top.split(":")[1]) if top else None
                if top_ix is not None and last == top_ix:
                    out += [lead + f": it ends at that profile (`{top}`), late in the run.", ""]
                    continue
                if top_ix is not None and last is not None and last > top_ix:
                    out += [lead + f": it ends above the best static profile (`{top}`, "
                            f"{r.phase(top)['completions_per_interrupt']:.1f} completions per "
                            f"interrupt), batching more than the load fills ("
                            f"{m['completions_per_interrupt']:.1f} per interrupt, the core "
                            f"{100 * m['cpu_utilisation']:.0f} % busy).", ""]
                    continue
                out += [lead + f": the profile its cost model ({src}: {cc:g} µs per "
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
                out += [lead + f" and, with its costs ({src}: {cc:g} µs per completion, {ci:g} µs "
                        f"per interrupt), predicts about {100 * per_core * (cc + ci) * 1e-6:.0f} % "
                        f"utilisation unmoderated at {count(per_core)}/s per core: too light for "
                        "batching to pay by those costs, so it holds profile 0. The host spends "
                        f"{us(m['cpu_per_completion_ns'])} µs per completion (CPU "
                        f"{100 * m['cpu_utilisation']:.0f} % busy): the default costs are too low "
                        "for it, which is what `model:` costs (`dimctl-model-host`) are for."
                        + one_queue_per_core(runs, r, name), ""]
                continue
            top = best_static_column(r)
            cores = r.by_policy[name].get("model_cores") or []
            if cores and all(c["saturated"] for c in cores):
                # The saturation rule's climb decided, not the latency objective.
                last, since = last_change(r, name)
                k_name = next((p for p in r.policies if p.startswith("kernel-")), None)
                kt = (f"; kernel DIM, which decides every 64 events, carries "
                      f"{count(r.phase(k_name)['throughput'])}" if k_name else "")
                out += [lead + f", finds its cores saturated and climbs (profiles {held}, at "
                        f"{last} from {since / 1e6:g} ms; the measured window starts at "
                        f"{r.w['warmup_ns'] / 1e6:g} ms): "
                        f"{m['completions_per_interrupt']:.1f} completions per interrupt where the "
                        f"best static profile (`{top}`) has "
                        f"{r.phase(top)['completions_per_interrupt']:.1f}. The climb takes a period "
                        "per trial and stops where its costs ("
                        f"{src}: {cc:g} µs per completion, {ci:g} µs per interrupt) predict the "
                        "next profile saves less CPU than the rule's least gain (`climb_gain`, "
                        f"docs/CONTROLLER.md){kt}." + one_queue_per_core(runs, r, name), ""]
                continue
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
            cc, ci, src = model_costs_us(r, name, ctl)
            out += [f"- Why `{r.id}` phase {ph}: `{name}` settles at once but on profile "
                    f"{profile_at(r, name, phase_bounds(r)[ph][1] - 1)} (p99 "
                    f"{quant(m['latency'], 'p99')} us) where the oracle takes "
                    f"{o.get('oracle_choice', '?')} (p99 {quant(o['latency'], 'p99')} us). At "
                    f"{count(m['throughput'])}/s and its costs ({src}: {cc:g} + {ci:g} µs) it predicts "
                    f"about {100 * m['throughput'] * (cc + ci) * 1e-6:.0f} % utilisation "
                    "unmoderated and too little gain from batching to move (its thresholds and "
                    "their up margin); the core is "
                    f"{100 * m['cpu_utilisation']:.0f} % busy at {us(m['cpu_per_completion_ns'])} "
                    "µs per completion.", ""]
    return out



def trace_target_rows(r, ctl):
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
    cells, lc = change_cells(r, pols, ctl)
    rows.append((f"changes/s ≤ {ctl.change_budget} (W8's rule)", r, cells))
    rows.append(("no limit cycle (W8's rule)", r, lc))
    return rows

