"""The page: the simulator report (docs/sim/report.md, between its markers) and
docs/sim/full-report.md (every metric of every phase of every run)."""
from .load import TABLES
from .markdown import BEGIN, END, QUANTILES, convergence, count, md_table, quant, us
from .sections import (section_adapt, section_efficiency, section_software, section_traces,
                       section_w1, section_w2, section_w3, section_w6, section_w7)
from .targets import section_targets


def policy_text(name, table, ctl):
    if name == "none":
        return "no moderation (N = 1, T = 0): the latency floor, the interrupt ceiling"
    if name.startswith("static:"):
        ix = int(name.split(":")[1])
        t, n = TABLES[table][ix]
        return f"profile {ix} of the {table} table always (T = {t} us, N = {n})"
    if name.startswith("kernel-"):
        return "the kernel's DIM (dim:: library, the kernel's code paths and 64-event windows)"
    if name.startswith("dimctl-model") and "-eff:" in name:
        budget = name.split("-eff:", 1)[1].split("@", 1)[0]
        told = " told the workload's costs and timer," if name.startswith("dimctl-model-host") else ""
        return (f"dimctl's model-based policy{told} under the efficiency objective "
                f"(`model.objective: efficiency`, `model.latency_budget: {budget}`): the least "
                "predicted CPU per completion among the profiles whose predicted mean latency is "
                f"within {budget} of no moderation's")
    if name.startswith("dimctl-model-host"):
        return ("dimctl's model-based policy told the workload's costs and timer semantics "
                "(`model:` completion_cost = completion + app, interrupt_cost = irq + poll, timer)")
    if name.startswith("dimctl-model"):
        cc, ci = ctl.model_costs_us
        return ("dimctl's model-based policy in the daemon's default config (the Controller, "
                "algorithm model, `model.costs: measured`: per core the costs estimated from the "
                f"simulated CPU times once confident, before that {cc:g} µs per completion and "
                f"{ci:g} µs per interrupt)")
    if name.startswith("dimctl-"):
        return ("dimctl's daemon Controller running DIM on sampled counters every "
                f"{ctl.period_of[name] / 1e6:g} ms")
    if name == "oracle":
        return "best static profile per phase in hindsight, phase by phase on one run (throughput within 1 %, then p99, then CPU)"
    return ""



def full_report(runs, commit, stamp, report_link):
    """Every metric of every run; report_link is the report's path relative to this file."""
    out = ["# Simulator report: every metric of every run", "",
           f"Generated at commit `{commit}`, {stamp}, by `bench/sim/run.sh BUILD` (part of "
           "`make bench`), which runs every `dimctl sim` command below and then "
           f"`bench/sim/report.py`; the targets and the summary are in [{report_link}]"
           f"({report_link}). `*` marks a quantile with fewer than 100 "
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


def report(runs, commit, plot, ctl, stamp):
    total_completions = sum(x["simulated_completions"] for r in runs.values() for x in r.doc["runs"])
    wall = sum(x["wall_seconds"] for r in runs.values() for x in r.doc["runs"])
    version = next(iter(runs.values())).doc.get("version", "?")
    table_of = {}
    for r in runs.values():
        for p in r.policies:
            table_of.setdefault(p, r.w["table"])
    out = [BEGIN, "",
           "# Simulator report (generated)", "",
           f"Generated at commit `{commit}` (dimctl {version}), {stamp}, by `bench/sim/run.sh "
           "BUILD` (part of `make bench`), which runs `dimctl sim` and then `bench/sim/report.py`: "
           f"{len(runs)} runs of `dimctl sim`, "
           f"{count(total_completions)} simulated completions in {wall:.0f} s of simulation time "
           "(summed over runs). The simulation is deterministic: the same commit and seeds give "
           "the same numbers on any machine. Every metric of every phase: "
           f"[{plot.link}full-report.md]({plot.link}full-report.md).", "",
           "Everything below is a simulation under the stated cost models (docs/SIMULATOR.md): it "
           "shows directions and mechanisms, not what a given NIC or HCA will do "
           "(performance-research 6.6). Quantiles marked `*` have fewer than 100 completions "
           "beyond them (performance-research 5.3) and are not significant. One seed per workload, "
           "common random numbers across policies (every policy sees the same arrivals and "
           "service times), so differences between columns are paired, not noise.", "",
           "Policies:", ""]
    for p in sorted(table_of, key=lambda x: (x != "none", not x.startswith("static"), x)):
        out.append(f"- `{p}`: {policy_text(p, table_of[p], ctl)}")
    out.append("")
    out += section_targets(runs, ctl)
    out += section_w1(runs, plot)
    out += section_w2(runs, plot)
    out += section_w3(runs)
    out += section_adapt(runs, plot)
    out += section_w6(runs)
    out += section_w7(runs)
    out += section_software(runs)
    out += section_efficiency(runs)
    out += section_traces(runs, plot, ctl)
    out += ["### Not answered here", "",
            "- Real NVMe devices (review question 4): the W1 service time is log-normal "
            "(NVMe-like), not a device. No NIC or HCA with real moderation is available here.",
            "- Confidence intervals over ≥ 10 seeds (performance-research 5.3): one seed per "
            "workload (the tail quantiles rest on 10^5 to 10^7 completions instead).",
            "- Cost models are assumptions within performance-research section 4's ranges, not "
            "measurements of a host; the 64k link bound is modelled, not measured.", "", END]
    return out

