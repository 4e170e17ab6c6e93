#!/usr/bin/env python3
"""What a simulation-based predictor (a "digital twin") would choose, against the sweep's rule.

usage: twin.py [--dimctl PATH] [--jobs N] [--seed S] [--duration D] [--bursts-as-poisson]
               [--closed-as-poisson] [--constant-service] [--measured-costs] [--table-timer]
               --statics FILE DIR [DIR...]

DIR is a seed directory bench/sim/sweep/run.sh wrote. For every single-phase workload the twin
runs each static profile of the workload's table on a copy of the workload, under another seed
(--seed, default 777) and for a shorter run (--duration, default 100ms: the warm-up scales with
it). It picks one profile by the oracle's criterion: throughput within 1 % (or 100 completions)
of the best, then the lowest p99, then the least CPU per completion. That profile's whole run on
the sweep's own seed is then judged against the saved oracle by the sweep's rule (report.py). The
static runs come from statics.py --save (--statics FILE), so run that first. The workload copies
live in a temporary directory, removed at the end.

The options take away what the daemon could not know, one at a time:
  --bursts-as-poisson   on/off sources become Poisson at the rate dimctl-model measured (the
                        per-period counters see a rate, not the bursts inside a period)
  --closed-as-poisson   closed loops become Poisson at their measured rate (depth and think time
                        are not measured)
  --constant-service    the device's service time becomes its mean (a pure delay the counters
                        do not see)
  --measured-costs      the stage's costs become what the model's estimator measured
                        (model_cores: the costs it used, unstretched, and its background share as
                        application work per completion), not the workload's cost model
  --table-timer         the stage's timer semantics become what the model assumes for the table
                        (rate-limit for net-eqe and RDMA, idle-gap for net-cqe; CONFIG.md
                        model.timer): the daemon sets the mode on a net device, not on an HCA
Prints, per source kind: workloads, twin meets, dimctl-model meets. Standard library + PyYAML.
"""
import argparse
import collections
import concurrent.futures
import json
import pathlib
import statistics
import sys
import tempfile

import yaml

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import report  # noqa: E402
import statics  # noqa: E402


def pick(runs):
    """The oracle's criterion (simulator.cc better()) over whole-run totals: throughput within
    1 % of the best, or within 100 completions over the run, then the lowest p99, then the least
    CPU per completion; ties keep the lower index."""
    best = max(r["throughput"] for r in runs)

    def key(i):
        r = runs[i]
        slack = max(0.01 * best, 100 / r["seconds"] if r["seconds"] > 0 else 0.0)
        return (r["throughput"] < best - slack, report.p99(r), r["cpu_per_completion_ns"])
    return min(range(len(runs)), key=key)


def measured_cost(w, doc):
    """The inline cost model the model's estimator measured, or None without a confident core."""
    cores = [c for c in w.runs["dimctl-model"].get("model_cores") or [] if c["confidence"] > 0]
    if not cores:
        return None
    bg = statistics.median(c["background"] for c in cores)
    completion = statistics.median(c["completion_cost_ns"] for c in cores) * (1 - bg)
    interrupt = statistics.median(c["interrupt_cost_ns"] for c in cores) * (1 - bg)
    n_cores = max(1, min(doc["stages"][0].get("cores", 1), w.queues))
    core_rate = w.runs["dimctl-model"]["total"]["throughput"] / n_cores
    app = bg / core_rate * 1e9 if core_rate > 0 else 0
    return {"irq": f"{int(interrupt)}ns", "completion": f"{int(completion)}ns", "poll": "0ns",
            "app": f"{int(app)}ns"}


def twin_workload(w, path, args, out_dir):
    doc = yaml.safe_load(path.read_text())
    rate = w.runs["dimctl-model"]["total"]["throughput"] / w.queues
    kinds = ({"onoff"} if args.bursts_as_poisson else set()) | (
        {"closed"} if args.closed_as_poisson else set())
    for src in doc["sources"]:
        if src["kind"] in kinds:
            src.clear()
            src.update({"kind": "poisson", "flow": "main", "rate": round(rate, 1), "bytes": 512})
    cost = measured_cost(w, doc) if args.measured_costs else None
    for st in doc["stages"]:
        if args.constant_service and isinstance(st["service"], dict):
            st["service"] = st["service"]["mean"]
        if cost is not None:
            st["cost"] = cost
        if args.table_timer:
            st["timer"] = "idle-gap" if doc["table"] == "net-cqe" else "rate-limit"
    out = out_dir / path.name
    out.write_text(yaml.safe_dump(doc, sort_keys=False))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dimctl", default="build/userspace/cli/dimctl")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--seed", default="777")
    ap.add_argument("--duration", default="100ms")
    ap.add_argument("--statics", type=pathlib.Path, required=True,
                    help="statics.py --save output for the same DIRs")
    ap.add_argument("--bursts-as-poisson", action="store_true")
    ap.add_argument("--closed-as-poisson", action="store_true")
    ap.add_argument("--constant-service", action="store_true")
    ap.add_argument("--measured-costs", action="store_true")
    ap.add_argument("--table-timer", action="store_true")
    ap.add_argument("dirs", nargs="+", type=pathlib.Path)
    args = ap.parse_args()
    saved = json.loads(args.statics.read_text())
    with tempfile.TemporaryDirectory(prefix="dimctl-twin-") as tmp:
        run(args, saved, pathlib.Path(tmp))


def run(args, saved, out_dir):
    """Every single-phase workload of args.dirs: the twin's pick, judged; the copies in out_dir."""
    jobs = []
    for d in args.dirs:
        _, workloads = report.load_seed(d)
        for w in workloads:
            path = d / f"{w.name}.yaml"
            if len(yaml.safe_load(path.read_text())["phases"]) == 1:
                jobs.append((w, path))

    def choose(job):
        w, path = job
        twin = twin_workload(w, path, args, out_dir)
        return pick(statics.statics(args.dimctl, twin,
                                    ["--seed", args.seed, "--duration", args.duration]))

    by = collections.defaultdict(lambda: [0, 0, 0])
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as ex:
        for (w, path), ix in zip(jobs, ex.map(choose, jobs)):
            chosen = saved[str(path)][ix]
            row = by[w.info["source"]]
            row[0] += 1
            row[1] += report.meets(report.ratios(chosen, w.oracle["total"], w.queues))
            row[2] += w.meets("dimctl-model")
    total = [sum(r[i] for r in by.values()) for i in range(3)]
    print(f"single-phase workloads: {total[0]}; the twin meets the rule on {total[1]}, "
          f"dimctl-model on {total[2]}")
    for src, (n, twin, model) in sorted(by.items()):
        print(f"  {src}: {n} workloads, twin {twin}, dimctl-model {model}")


if __name__ == "__main__":
    main()
