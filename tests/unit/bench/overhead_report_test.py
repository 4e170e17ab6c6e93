#!/usr/bin/env python3
"""bench/host/overhead.py's report on synthetic runs: what a cell says is the median of ratios
paired within a block, not a ratio of medians; the machine's spread is none2's; --markdown
replaces only its section and refuses a file without one.

    overhead_report_test.py REPO_ROOT
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = sys.argv.pop(1) if len(sys.argv) > 1 else "."
SCRIPT = os.path.join(ROOT, "bench/host/overhead.py")
sys.path.insert(0, os.path.join(ROOT, "bench/host"))
import overhead  # noqa: E402


def run(state, rep, workload, received_per_s=1000.0, p50=30.0, cpu=10.0, netlink=None):
    r = {"state": state, "repeat": rep, "workload": workload, "received_per_s": received_per_s,
         "percentiles": {"50.000": p50}, "cpu_us_per_msg": cpu, "net_rx_us_per_msg": cpu / 2,
         "sys_us_per_msg": cpu / 2, "state_us_per_msg": 0.0, "state_cpu_share": 0.0,
         "server_cs_per_msg": 0.1, "irqs_per_s": {"RES": [10, 20], "CAL": [1, 2]},
         "bpf": {"dimctl_napi_poll_btf#9": {"run_ns_per_msg": 40.0, "meter": False},
                 "dimctl_softirq_entry_btf#3": {"run_ns_per_msg": 500.0, "meter": True}}}
    if netlink is not None:
        r["netlink_per_s"] = netlink
    return r


def data():
    # Flood: none 100/200/400, shadow 99/150/390 -> paired ratios .99 .75 .975 (median .975);
    # the ratio of the medians would be 150/200 = .75. none2: 101/202/396 -> 1.01 1.01 .99.
    none, shadow, none2 = [100, 200, 400], [99, 150, 390], [101, 202, 396]
    runs = []
    for rep in range(3):
        runs.append(run("none", rep, "flood", none[rep], cpu=10.0 + rep))
        runs.append(run("shadow", rep, "flood", shadow[rep], cpu=10.2 + rep,
                        netlink={"netdev": [2.0, 0.0, 1.0][rep]}))
        runs.append(run("none2", rep, "flood", none2[rep], cpu=10.0 + rep))
        # QD=1: none 20/40/80, shadow 21/40/84 -> 1.05 1.0 1.05 (median 1.05).
        runs.append(run("none", rep, "pingpong", p50=[20, 40, 80][rep]))
        runs.append(run("shadow", rep, "pingpong", p50=[21, 40, 84][rep]))
        runs.append(run("none2", rep, "pingpong", p50=[20, 40, 80][rep]))
        for s in ("none", "shadow", "none2"):
            runs.append(run(s, rep, "paced", p50=50.0))
    return {"kind": "overhead", "host": "6.18", "started": "2026-12-06T00:00:00Z",
            "commit": "abc1234", "repeats": 3, "seconds": 2, "rate": 20000, "seed": 1,
            "meter": "bpf", "bpf_stats": True, "states": ["none", "none2", "shadow"],
            "loadavg_start": ["0.5"], "loadavg_end": ["0.6"], "runs": runs}


def row(text, state):
    for line in text.splitlines():
        if line.startswith(f"| {state} |"):
            return [c.strip() for c in line.strip("|").split("|")]
    raise AssertionError(f"no row for {state} in:\n{text}")


class Report(unittest.TestCase):
    def test_cells_are_medians_of_paired_ratios(self):
        text = overhead.report_text(data(), None, None)
        cells = row(text, "shadow")
        self.assertEqual(cells[1], "150")     # flood msg/s: median of shadow's own runs
        self.assertEqual(cells[2], "0.975")   # paired, not 150/200
        self.assertEqual(cells[3], "+0.20")   # CPU difference in the same block
        self.assertEqual(cells[5], "1.050")   # QD=1 p50 ratio
        self.assertEqual(row(text, "none")[2], "1.000")

    def test_the_machines_spread_is_none2s(self):
        text = overhead.report_text(data(), None, None)
        self.assertIn("flood ratio's 10th-90th percentile over the repetitions 0.994-1.010",
                      text)

    def test_a_block_without_none_pairs_nothing(self):
        d = data()
        d["runs"] = [r for r in d["runs"] if not (r["state"] == "none" and r["repeat"] == 1)]
        # Without the middle block's none: ratios .99 and .975 remain, median .9825, shown .982.
        self.assertEqual(row(overhead.report_text(d, None, None), "shadow")[2], "0.982")

    def test_the_meters_programs_are_not_the_states(self):
        text = overhead.report_text(data(), None, None)
        lines = [l for l in text.splitlines() if l.startswith("| shadow |")]
        self.assertEqual(len(lines), 2)
        self.assertEqual([c.strip() for c in lines[1].strip("|").split("|")][4], "40.0")

    def test_netlink_requests_are_the_daemons_median(self):
        text = overhead.report_text(data(), None, None)
        self.assertIn("shadow: netdev 1.0", text)

    def test_markdown_section_is_replaced_and_a_file_without_markers_refused(self):
        with tempfile.TemporaryDirectory() as d:
            runs = os.path.join(d, "states.json")
            with open(runs, "w") as f:
                json.dump(data(), f)
            doc = os.path.join(d, "doc.md")
            with open(doc, "w") as f:
                f.write("head\n<!-- overhead:begin -->\nold\n<!-- overhead:end -->\ntail\n")
            r = subprocess.run([sys.executable, SCRIPT, "report", "--runs", runs, "--markdown",
                                doc, "--commit", "c0ffee0"], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            text = open(doc).read()
            self.assertTrue(text.startswith("head\n<!-- overhead:begin -->\nMeasured at c0ffee0"))
            self.assertTrue(text.endswith("<!-- overhead:end -->\ntail\n"))
            self.assertNotIn("old", text)
            bare = os.path.join(d, "bare.md")
            with open(bare, "w") as f:
                f.write("no section\n")
            r = subprocess.run([sys.executable, SCRIPT, "report", "--runs", runs, "--markdown",
                                bare], capture_output=True, text=True)
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("overhead:begin", r.stderr)
            self.assertEqual(open(bare).read(), "no section\n")


if __name__ == "__main__":
    unittest.main(verbosity=2)
