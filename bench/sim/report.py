#!/usr/bin/env python3
"""The simulator report, from the `dimctl sim --json --timeline` documents bench/sim/run.sh writes.

usage: report.py --runs DIR --commit SHA --markdown docs/sim/report.md --figures docs/sim

- replaces what lies between <!-- sim:begin --> and <!-- sim:end --> in the markdown file (the
  rest of the file is left alone; the section is appended when the markers are missing, and the
  file created): the targets of the model policy, then one section per workload group;
- writes FIGURES/full-report.md (every metric of every phase of every run);
- draws SVG figures into the figures directory with gnuplot: QD=1 latency CDF to p99.999 (W1),
  latency vs IOPS per policy (W2), moderation profile and latency through step changes (W5).

Every table and figure names its workload, cost model, seed and the commit; both pages start
with the commit, the date (UTC) and the command that generated them. The control period,
the change budget and the model's default costs are what the runs' JSON says the Controller ran
with. Standard library only (json); the figures need gnuplot (Debian gnuplot-nox, installed by
scripts/deps.sh). The modules, by role, are in sim_report/ beside this file.
"""
import argparse
import datetime
import os
import pathlib
import sys

from sim_report.load import Controller, ReportError, load_runs
from sim_report.markdown import BEGIN, END, replace_section
from sim_report.page import full_report, report
from sim_report.plots import Plotter


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
    md_dir = pathlib.Path(a.markdown).resolve().parent
    md_dir.mkdir(parents=True, exist_ok=True)
    fig_dir = pathlib.Path(a.figures).resolve()
    link = os.path.relpath(fig_dir, md_dir)
    plot = Plotter(a.figures, a.commit, "" if link == "." else link + "/")
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    try:
        lines = report(runs, a.commit, plot, Controller(runs), stamp)
    except ReportError as e:
        print(e, file=sys.stderr)
        return 1
    replace_section(a.markdown, lines)
    back = os.path.relpath(pathlib.Path(a.markdown).resolve(), fig_dir)
    (fig_dir / "full-report.md").write_text("\n".join(full_report(runs, a.commit, stamp, back)) + "\n")
    print(f"report.py: {a.markdown} (section {BEGIN}..{END}), {a.figures}/full-report.md, "
          f"{len(plot.made)} figures: {', '.join(plot.made)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
