"""Figures: SVGs drawn with gnuplot (Debian gnuplot-nox, installed by scripts/deps.sh)."""
import math
import pathlib
import subprocess
import tempfile

from .load import TABLES


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
    def __init__(self, out_dir, commit, link=""):
        self.out = pathlib.Path(out_dir).resolve()
        self.out.mkdir(parents=True, exist_ok=True)
        self.commit = commit
        self.link = link  # the figures' directory as the markdown links it ("" or "dir/")
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

