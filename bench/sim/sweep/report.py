#!/usr/bin/env python3
"""The randomized sweep's report, from the `dimctl sim --json` documents bench/sim/sweep/run.sh
writes (one directory per seed: the workloads, sweep.json, one JSON per workload).

usage: report.py --commit SHA [--date YYYY-MM-DD] --markdown docs/BENCHMARKS.md --figures docs/sim
                 DIR [DIR...]

- replaces what lies between <!-- sweep:begin --> and <!-- sweep:end --> in the markdown file
  (appended at the end when the markers are missing): per seed and policy the share of workloads
  meeting the oracle rule, the model against kernel DIM, and the model's misses by cause;
- writes docs/sim/sweep-seedS.md: every workload the model misses, with its figures and cause;
- draws docs/sim/sweep-seedS.svg with gnuplot: throughput ratio against p99 ratio (both to the
  oracle's) for the model and kernel DIM, one point per workload, the rule's corner marked.

The oracle rule: throughput >= 98 % of the oracle's, p99 <= 1.25x the oracle's,
<= 10 moderation changes/s per queue, over the whole measured run. "As good as DIM": throughput
>= 99 % of kernel DIM's and p99 <= kernel DIM's. The section and every detail page name the
commit, its date (--date) and the command that generated them. Standard library only.
"""
import argparse
import json
import pathlib
import subprocess
import sys
import tempfile

BEGIN, END = "<!-- sweep:begin -->", "<!-- sweep:end -->"
EFF_BEGIN, EFF_END = "<!-- sweep-efficiency:begin -->", "<!-- sweep-efficiency:end -->"
THR, P99, CHANGES = 0.98, 1.25, 10.0
FAR_THR, FAR_P99 = 0.90, 10.0  # far off: what the report counts beside the rule
ROLES = ["none", "kernel", "dimctl-dim", "dimctl-model", "dimctl-model-host", "oracle-late",
         "oracle"]
LABEL = {"none": "none", "kernel": "kernel DIM", "dimctl-dim": "dimctl DIM",
         "dimctl-model": "**dimctl-model** (default config)",
         "dimctl-model-host": "dimctl-model-host (told the costs)",
         "oracle-late": "oracle@20ms (the oracle's choices, each one control period late)",
         "oracle": "oracle"}


# The efficiency rule (docs/benchmarks/sweep.md "The efficiency rule"): the model under the
# efficiency objective at EFF_BUDGET_NS against the static profiles whose mean latency exceeds
# `none`'s by at most that budget.
EFF_BUDGET_NS = 50_000
EFF_CPU, EFF_THR = 1.05, 0.98
EFF_POLICY = "dimctl-model-eff"  # the role of dimctl-model-eff:50us


def role(policy):
    if policy.startswith("static:"):
        return policy
    if policy.startswith("dimctl-model") and "-eff:" in policy:
        return EFF_POLICY
    if policy.startswith("kernel-"):
        return "kernel"
    if policy in ("dimctl-model", "dimctl-model-host", "none", "oracle"):
        return policy
    if policy.startswith("oracle@"):
        return "oracle-late"
    return "dimctl-dim"


def p99(m):
    return m["latency"]["quantiles"]["p99"]["ns"] if m["latency"]["count"] else 0.0


def ratios(m, ref, queues):
    """(throughput ratio, p99 ratio, changes/s per queue) of metrics m against ref."""
    thr = m["throughput"] / ref["throughput"] if ref["throughput"] > 0 else 1.0
    rp = p99(ref)
    lat = p99(m) / rp if rp > 0 else 1.0
    return thr, lat, m["changes_per_s"] / queues


def meets(r):
    return r[0] >= THR and r[1] <= P99 and r[2] <= CHANGES


class Workload:
    def __init__(self, info, docs):
        self.info = info
        self.name = info["name"]
        self.queues = docs[0]["workload"]["queues"]
        self.runs = {role(r["policy"]): r for doc in docs for r in doc["runs"]}
        self.oracle = self.runs.get("oracle")
        self.statics = sorted((k for k in self.runs if k.startswith("static:")),
                              key=lambda k: int(k.split(":")[1]))

    def ratio(self, who, phase=None):
        m = self.runs[who]["total"] if phase is None else self.runs[who]["phases"][phase]
        o = self.oracle["total"] if phase is None else self.oracle["phases"][phase]
        return ratios(m, o, self.queues)

    def meets(self, who):
        return meets(self.ratio(who))

    def as_good_as_dim(self, who):
        m, k = self.runs[who]["total"], self.runs["kernel"]["total"]
        thr_ok = k["throughput"] <= 0 or m["throughput"] >= 0.99 * k["throughput"]
        return thr_ok and p99(m) <= p99(k)

    def why(self, who="dimctl-model"):
        """What the miss is, and where: the failed criteria, then the circumstances."""
        thr, lat, ch = self.ratio(who)
        t = self.runs[who]["total"]
        o = self.oracle["total"]
        parts = []
        if thr < THR:
            parts.append(f"throughput {thr:.1%}")
        if lat > P99:
            parts.append(f"p99 {lat:.2f}x")
        if ch > CHANGES:
            parts.append(f"{ch:.1f} changes/s/q")
        util = max(t["cpu_utilisation"], o["cpu_utilisation"])
        circ = []
        if util >= 0.9:
            circ.append("saturated")
        elif self.info["load"] > 1.0:
            circ.append("overload")
        phases = self.runs[who]["phases"]
        if len(phases) > 1:
            bad = [p["phase"] for i, p in enumerate(phases)
                   if p["completions"] > 0 and not meets(self.ratio(who, i))]
            if bad and len(bad) < len(phases):
                circ.append("phase " + "+".join(bad))
        if self.info["source"] == "onoff":
            circ.append("periodic on/off" if self.info.get("periodic") else "on/off")
        if self.info["cv"] > 1.5:
            circ.append(f"heavy tail (cv {self.info['cv']})")
        if o["completions"] < 2000:
            circ.append(f"few completions ({o['completions']})")
        if "dimctl-model-host" in self.runs and who == "dimctl-model":
            circ.append("told costs: " + ("met" if self.meets("dimctl-model-host") else "missed"))
        cpi = (t["completions_per_interrupt"], o["completions_per_interrupt"])
        return parts, circ, cpi

    # ---- the efficiency rule ----

    def added_mean(self, who):
        """Mean latency over `none`'s (same arrivals), in ns."""
        return (self.runs[who]["total"]["latency"]["mean_ns"] -
                self.runs["none"]["total"]["latency"]["mean_ns"])

    def eff_within(self):
        """The static profiles whose added mean latency is within the budget."""
        return [s for s in self.statics if self.added_mean(s) <= EFF_BUDGET_NS]

    def eff_reference(self):
        """The best static profile within the budget: the least CPU per completion among them
        (ties to the lower index); without one, the static with the least added mean latency."""
        within = self.eff_within()
        if within:
            return min(within, key=lambda s: self.runs[s]["total"]["cpu_per_completion_ns"])
        return min(self.statics, key=self.added_mean)

    def eff_ratios(self, who=EFF_POLICY):
        """(CPU per completion, throughput) of `who` against the reference, changes/s per queue."""
        m, ref = self.runs[who]["total"], self.runs[self.eff_reference()]["total"]
        cpu = (m["cpu_per_completion_ns"] / ref["cpu_per_completion_ns"]
               if ref["cpu_per_completion_ns"] > 0 else 1.0)
        thr = m["throughput"] / ref["throughput"] if ref["throughput"] > 0 else 1.0
        return cpu, thr, m["changes_per_s"] / self.queues

    def meets_eff(self, who=EFF_POLICY):
        cpu, thr, ch = self.eff_ratios(who)
        return cpu <= EFF_CPU and thr >= EFF_THR and ch <= CHANGES

    def beats_statics(self, who=EFF_POLICY):
        """At least as good as the best single static profile: CPU per completion at most that
        of every static within the budget, throughput >= 98 % of the cheapest one's."""
        cpu, thr, _ = self.eff_ratios(who)
        return cpu <= 1.0 + 1e-9 and thr >= EFF_THR

    def eff_category(self, who=EFF_POLICY):
        """A miss of the efficiency rule by the first failed clause: throughput, changes, then
        CPU, split by where the model's batching sits against the reference's."""
        cpu, thr, ch = self.eff_ratios(who)
        if thr < EFF_THR:
            return "throughput below 98 % of the reference's"
        if ch > CHANGES:
            return "more than 10 changes/s per queue"
        b = self.runs[who]["total"]["completions_per_interrupt"]
        ref_b = self.runs[self.eff_reference()]["total"]["completions_per_interrupt"]
        if b < ref_b * 0.95:
            return "CPU: batches less than the reference (a lower profile)"
        if b > ref_b * 1.05:
            return "CPU: batches more than the reference, costs more"
        return "CPU: batches as the reference, costs more"

    def category(self, who="dimctl-model"):
        _, circ, _ = self.why(who)
        if "saturated" in circ:
            return "saturated core"
        if "overload" in circ:
            return "overload"
        if any(c.startswith("phase") for c in circ):
            return "one phase (step or ramp)"
        if any("on/off" in c for c in circ):
            return "on/off bursts"
        return "other"


def load_seed(directory):
    """The seed's workloads, each with the runs of NAME.json (the oracle rule) and NAME.eff.json
    (the efficiency rule), whichever exist."""
    d = pathlib.Path(directory)
    meta = json.loads((d / "sweep.json").read_text())
    out = []
    for info in meta["workloads"]:
        docs = [json.loads(f.read_text()) for f in (d / f"{info['name']}.json",
                                                   d / f"{info['name']}.eff.json") if f.exists()]
        out.append(Workload(info, docs))
    return meta, out


def scatter(figures, seed, workloads, commit):
    name = f"sweep-seed{seed}"
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="dimctl-sweep-"))
    data = tmp / "points.dat"
    with open(data, "w") as fh:
        for who in ("kernel", "dimctl-model"):
            for w in workloads:
                thr, lat, _ = w.ratio(who)
                fh.write(f"{min(max(thr, 0.3), 1.1):.5f} {min(max(lat, 0.1), 100):.5f}\n")
            fh.write("\n\n")
    svg = pathlib.Path(figures).resolve() / f"{name}.svg"
    script = f"""set terminal svg size 900,620 dynamic enhanced font 'Helvetica,12' background rgb 'white'
set output '{svg}'
set title "randomized sweep, seed {seed}: {len(workloads)} workloads against the oracle (commit {commit})" noenhanced
set grid lc rgb '#dddddd'
set key outside right top noenhanced
set xlabel 'throughput / oracle throughput (clipped to 0.3..1.1)'
set ylabel 'p99 / oracle p99 (clipped to 0.1..100)'
set logscale y
set xrange [0.3:1.1]
set yrange [0.1:100]
set arrow from {THR},0.1 to {THR},100 nohead lc rgb '#444444' dt 2
set arrow from 0.3,{P99} to 1.1,{P99} nohead lc rgb '#444444' dt 2
set label 'rule: right of and below the dashed lines' at 0.32,70
plot '{data.name}' index 0 with points pt 6 ps 0.8 lc rgb '#d62728' title 'kernel DIM', \\
     '{data.name}' index 1 with points pt 7 ps 0.6 lc rgb '#ff7f0e' title 'dimctl-model'
"""
    (tmp / "plot.gp").write_text(script)
    subprocess.run(["gnuplot", "plot.gp"], check=True, cwd=tmp)
    return name


def seed_section(meta, workloads, commit, figures, date):
    seed, n = meta["seed"], len(workloads)
    lines = [f"### Seed {seed}: {n} workloads, {meta['duration_s']:g} s simulated each", ""]
    lines += ["| policy | meets the oracle rule | as good as kernel DIM |", "|---|---|---|"]
    for who in ROLES:
        if any(who not in w.runs for w in workloads):
            continue  # a sweep from before the policy existed
        ok = sum(w.meets(who) for w in workloads)
        dim = "-"
        if who not in ("kernel", "oracle"):
            g = sum(w.as_good_as_dim(who) for w in workloads)
            dim = f"{g / n:.1%} ({g})"
        lines.append(f"| {LABEL[who]} | {ok / n:.1%} ({ok}) | {dim} |")
    # How far off the misses are: a rule that counts a 1.3x p99 like a 300x one hides the
    # failures an operator pages on.
    lines += ["", "How far from the oracle, over all workloads:", "",
              f"| policy | throughput < {FAR_THR:.0%} of the oracle's | p99 > {FAR_P99:g}x the "
              "oracle's | worst p99 / oracle's |", "|---|---|---|---|"]
    for who in ("none", "kernel", "dimctl-model", "dimctl-model-host", "oracle-late"):
        if any(who not in w.runs for w in workloads):
            continue
        r = [w.ratio(who) for w in workloads]
        lines.append(f"| {LABEL[who]} | {sum(x[0] < FAR_THR for x in r)} | "
                     f"{sum(x[1] > FAR_P99 for x in r)} | {max(x[1] for x in r):,.0f}x |")
    misses = [w for w in workloads if not w.meets("dimctl-model")]
    cats = {}
    for w in misses:
        cats.setdefault(w.category(), []).append(w)
    lines += ["", f"The model misses {len(misses)} of {n}; by the first circumstance that applies "
              "(saturated core, load above capacity, one phase only, on/off bursts):", ""]
    lines += ["| cause | workloads | failed on throughput / p99 / changes | told the costs, met |",
              "|---|---|---|---|"]
    for cat, ws in sorted(cats.items(), key=lambda kv: -len(kv[1])):
        thr = sum(w.ratio("dimctl-model")[0] < THR for w in ws)
        lat = sum(w.ratio("dimctl-model")[1] > P99 for w in ws)
        ch = sum(w.ratio("dimctl-model")[2] > CHANGES for w in ws)
        host = sum(w.meets("dimctl-model-host") for w in ws)
        lines.append(f"| {cat} | {len(ws)} | {thr} / {lat} / {ch} | {host} |")
    fig = scatter(figures, seed, workloads, commit)
    lines += ["", f"![seed {seed}: throughput and p99 ratios to the oracle](sim/{fig}.svg)", "",
              f"Every miss with its figures: [sim/sweep-seed{seed}.md](sim/sweep-seed{seed}.md).",
              ""]
    detail = [f"# Randomized sweep, seed {seed}: the workloads dimctl-model misses", "",
              f"Generated at commit `{commit}` ({date}) by `bench/sim/sweep/run.sh BUILD` (part "
              "of `make bench`; it draws the workloads with gen.py, runs `dimctl sim` on each and "
              "then bench/sim/sweep/report.py); the summary is in docs/BENCHMARKS.md, the method "
              "in docs/benchmarks/sweep.md. "
              f"Rule: throughput >= {THR:.0%} of the oracle's, p99 <= {P99}x, "
              f"<= {CHANGES:g} changes/s per queue. B = completions per interrupt (model / "
              "oracle).", "",
              "| workload | what | missed on | circumstances | B | kernel DIM |",
              "|---|---|---|---|---|---|"]
    for w in misses:
        parts, circ, cpi = w.why()
        i = w.info
        what = (f"{i['table']}, {i['queues']}q/{i['cores']}c, cost {i['cost']}, {i['source']}, "
                f"load {i['load']:.0%}, {i['shape']}, service {i['service']} {i['service_us']} us")
        k = w.ratio("kernel")
        detail.append(f"| {w.name} | {what} | {', '.join(parts)} | {', '.join(circ)} | "
                      f"{cpi[0]:.1f} / {cpi[1]:.1f} | {k[0]:.1%}, {k[1]:.2f}x |")
    (pathlib.Path(figures) / f"sweep-seed{seed}.md").write_text("\n".join(detail) + "\n")
    return lines


def eff_section(meta, workloads, commit, figures, date):
    """The efficiency rule on one seed: the share meeting it, as good as the best static, the
    misses by cause; the misses' figures in FIGURES/sweep-eff-seedS.md."""
    seed, n = meta["seed"], len(workloads)
    budget = f"{EFF_BUDGET_NS / 1e3:g} us"
    lines = [f"### Seed {seed}: {n} workloads, {meta['duration_s']:g} s simulated each", ""]
    lines += ["| policy | meets the efficiency rule | as good as the best static profile | "
              f"mean latency within {budget} of none's |", "|---|---|---|---|"]
    for who, label in ((EFF_POLICY, f"**dimctl-model-eff:{budget.replace(' ', '')}**"),
                       ("dimctl-model", "dimctl-model (latency objective, default config)")):
        if any(who not in w.runs for w in workloads):
            continue
        ok = sum(w.meets_eff(who) for w in workloads)
        best = sum(w.beats_statics(who) for w in workloads)
        lat = sum(w.added_mean(who) <= EFF_BUDGET_NS for w in workloads)
        lines.append(f"| {label} | {ok / n:.1%} ({ok}) | {best / n:.1%} ({best}) | "
                     f"{lat / n:.1%} ({lat}) |")
    none_within = sum(not w.eff_within() for w in workloads)
    refs = {}
    for w in workloads:
        refs[w.eff_reference()] = refs.get(w.eff_reference(), 0) + 1
    lines += ["", "The reference (the cheapest static profile within the budget) per workload: " +
              ", ".join(f"{k} {v}" for k, v in sorted(refs.items(),
                                                      key=lambda kv: int(kv[0].split(':')[1]))) +
              (f"; no static profile within the budget on {none_within} (the reference is then "
               "the static with the least added mean latency)" if none_within else "") + ".", ""]
    misses = [w for w in workloads if not w.meets_eff()]
    cats = {}
    for w in misses:
        cats.setdefault(w.eff_category(), []).append(w)
    lines += [f"dimctl-model-eff misses {len(misses)} of {n}; by the first failed clause "
              "(throughput, changes, CPU), and per source kind:", "",
              "| cause | workloads | closed / Poisson / on/off | multi-phase | median CPU ratio |",
              "|---|---|---|---|---|"]
    for cat, ws in sorted(cats.items(), key=lambda kv: -len(kv[1])):
        kinds = [sum(w.info["source"] == k for w in ws) for k in ("closed", "poisson", "onoff")]
        multi = sum(w.info["shape"] != "flat" for w in ws)
        ratios_ = sorted(w.eff_ratios()[0] for w in ws)
        lines.append(f"| {cat} | {len(ws)} | {' / '.join(map(str, kinds))} | {multi} | "
                     f"{ratios_[len(ratios_) // 2]:.2f}x |")
    lines += ["", f"Every miss with its figures: [sim/sweep-eff-seed{seed}.md]"
              f"(sim/sweep-eff-seed{seed}.md).", ""]
    detail = [f"# Randomized sweep, seed {seed}: the workloads dimctl-model-eff misses", "",
              f"Generated at commit `{commit}` ({date}) by `bench/sim/sweep/run.sh BUILD`; the "
              "summary is in docs/BENCHMARKS.md, the rule in docs/benchmarks/sweep.md (\"The "
              f"efficiency rule\"). Rule: CPU per completion <= {EFF_CPU:g}x the reference's (the "
              f"cheapest static profile whose mean latency is within {budget} of `none`'s), "
              f"throughput >= {EFF_THR:.0%} of its, <= {CHANGES:g} changes/s per queue. B = "
              "completions per interrupt (model / reference); +mean = mean latency over none's.",
              "",
              "| workload | what | cause | CPU ratio | throughput | changes/s/q | reference | B "
              "| +mean model / reference (us) | latency objective's CPU ratio |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for w in misses:
        i = w.info
        cpu, thr, ch = w.eff_ratios()
        ref = w.eff_reference()
        b = (w.runs[EFF_POLICY]["total"]["completions_per_interrupt"],
             w.runs[ref]["total"]["completions_per_interrupt"])
        what = (f"{i['table']}, {i['queues']}q/{i['cores']}c, cost {i['cost']}, {i['source']}, "
                f"load {i['load']:.0%}, {i['shape']}, service {i['service']} {i['service_us']} us")
        lat = (f"{w.added_mean(EFF_POLICY) / 1e3:+.1f} / {w.added_mean(ref) / 1e3:+.1f}")
        other = f"{w.eff_ratios('dimctl-model')[0]:.2f}x" if "dimctl-model" in w.runs else "-"
        detail.append(f"| {w.name} | {what} | {w.eff_category()} | {cpu:.2f}x | {thr:.1%} | "
                      f"{ch:.1f} | {ref} | {b[0]:.1f} / {b[1]:.1f} | {lat} | {other} |")
    (pathlib.Path(figures) / f"sweep-eff-seed{seed}.md").write_text("\n".join(detail) + "\n")
    return lines


def replace_section(path, body, begin=BEGIN, end=END):
    p = pathlib.Path(path)
    text = p.read_text() if p.exists() else ""  # a report of its own (held-out seeds)
    block = begin + "\n" + "\n".join(body) + "\n" + end
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        _, tail = rest.split(end, 1)
        text = head + block + tail
    elif text.strip():
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    else:
        text = block + "\n"
    p.write_text(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--commit", required=True)
    ap.add_argument("--date", default="", help="the commit's date, YYYY-MM-DD")
    ap.add_argument("--markdown", required=True)
    ap.add_argument("--figures", required=True)
    ap.add_argument("dirs", nargs="+")
    a = ap.parse_args()
    pathlib.Path(a.figures).mkdir(parents=True, exist_ok=True)
    stamp = f"Generated at commit `{a.commit}`{f' ({a.date})' if a.date else ''} by "
    body = ["## Randomized sweep (generated)", "",
            stamp + "`bench/sim/sweep/run.sh BUILD` (docs/benchmarks/sweep.md: the generator, "
            "the rule, the time budget). Rule: throughput >= 98 % of the oracle's, p99 <= 1.25x "
            "the oracle's, <= 10 changes/s per queue; as good as kernel DIM: throughput >= 99 % "
            "of kernel DIM's and p99 <= kernel DIM's. Targets for dimctl-model: 95 % and 90 %.",
            ""]
    eff = ["## Randomized sweep, the efficiency rule (generated)", "",
           stamp + "`bench/sim/sweep/run.sh BUILD` (docs/benchmarks/sweep.md, \"The efficiency "
           "rule\"). The model under `model.objective: efficiency`, `model.latency_budget: 50us` "
           "(`dimctl-model-eff:50us`) against the reference, the static profile with the least "
           "CPU per completion among those whose mean latency exceeds no moderation's by at most "
           "50 us. Rule: CPU per completion <= 1.05x the reference's, throughput >= 98 % of its, "
           "<= 10 changes/s per queue; as good as the best static profile: CPU per completion <= "
           "the reference's (so <= every static profile within the budget), throughput >= 98 % "
           "of its. Targets: 90 % and 95 %.", ""]
    oracle_dirs = eff_dirs = 0
    for d in a.dirs:
        meta, workloads = load_seed(d)
        date = a.date or "date not given"
        if all(w.oracle for w in workloads):
            body += seed_section(meta, workloads, a.commit, a.figures, date)
            oracle_dirs += 1
        if all(EFF_POLICY in w.runs and w.statics for w in workloads):
            eff += eff_section(meta, workloads, a.commit, a.figures, date)
            eff_dirs += 1
    # A rule's section is rewritten only by a run of that rule, over every seed given.
    if oracle_dirs == len(a.dirs):
        replace_section(a.markdown, body)
        print(f"report.py: {a.markdown} (section {BEGIN}..{END}), sweep figures in {a.figures}")
    if eff_dirs == len(a.dirs):
        replace_section(a.markdown, eff, EFF_BEGIN, EFF_END)
        print(f"report.py: {a.markdown} (section {EFF_BEGIN}..{EFF_END}), misses in "
              f"{a.figures}/sweep-eff-seed*.md")
    if not oracle_dirs and not eff_dirs:
        print("report.py: no seed directory holds a rule's runs", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
