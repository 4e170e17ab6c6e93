"""The simulator report's modules by role; bench/sim/report.py is the entry point.

- load: the `dimctl sim --json --timeline` documents bench/sim/run.sh writes, and what the
  daemon's Controller ran with (read from them, never repeated here);
- markdown: number formats, tables and the splice between the markers;
- plots: the SVG figures (gnuplot);
- targets: the model policy's targets, their verdicts and the mechanism behind a missed one;
- sections: one markdown section per workload group;
- page: the report (docs/sim/report.md, between its markers) and docs/sim/full-report.md.
"""
