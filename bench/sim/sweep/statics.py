#!/usr/bin/env python3
"""How far the sweep's rule is from a fixed choice: every static profile of a workload's table,
for the whole run, against the oracle the sweep saved.

usage: statics.py [--dimctl PATH] [--jobs N] DIR [DIR...]

DIR is a seed directory bench/sim/sweep/run.sh wrote (BUILD/bench-sweep/seed-S: the workloads
and one `dimctl sim --json` document each). Per seed it prints how many workloads the best single
static profile meets the oracle rule on (chosen in hindsight: any profile of the table that
meets it), how many dimctl-model meets, and, for the model's misses that some static profile
meets, where the model's batching sits against the profiles that meet: below all of them (it
under-moderates), inside their range, or above. The model's batching is matched to the static
profile with the nearest completions per interrupt over the run. Reads the rule from report.py;
standard library only. About 2 minutes for both seeds on 2 cores.
"""
import argparse
import collections
import concurrent.futures
import json
import pathlib
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import report  # noqa: E402

TABLE_SIZES = {"rdma": 9, "net-eqe": 5, "net-cqe": 5}


def statics(dimctl, workload):
    table = next(line.split(":", 1)[1].strip() for line in workload.read_text().splitlines()
                 if line.startswith("table:"))
    policies = ",".join(f"static:{i}" for i in range(TABLE_SIZES[table]))
    r = subprocess.run([dimctl, "sim", "--workload", str(workload), "--json", "--policy", policies],
                       capture_output=True, text=True, check=False)
    if r.returncode != 0:
        raise RuntimeError(f"{workload}: dimctl sim failed: {r.stderr[:300]}")
    return [run["total"] for run in json.loads(r.stdout)["runs"]]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dimctl", default="build/userspace/cli/dimctl")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("dirs", nargs="+", type=pathlib.Path)
    args = ap.parse_args()
    for d in args.dirs:
        _, workloads = report.load_seed(d)
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as ex:
            totals = list(ex.map(lambda w: statics(args.dimctl, d / f"{w.name}.yaml"), workloads))
        static_meets = model_meets = 0
        where = collections.Counter()
        for w, runs in zip(workloads, totals):
            ok = [i for i, t in enumerate(runs)
                  if report.meets(report.ratios(t, w.oracle["total"], w.queues))]
            static_meets += bool(ok)
            if w.meets("dimctl-model"):
                model_meets += 1
                continue
            if not ok:
                continue
            batch = w.runs["dimctl-model"]["total"]["completions_per_interrupt"]
            near = min(range(len(runs)),
                       key=lambda i: abs(runs[i]["completions_per_interrupt"] - batch))
            side = "below" if near < min(ok) else "above" if near > max(ok) else "inside"
            where[(w.info["source"], side)] += 1
        print(f"{d.name}: {len(workloads)} workloads; the best static profile meets the rule on "
              f"{static_meets}, dimctl-model on {model_meets}")
        for side in ("below", "inside", "above"):
            by = {s: n for (s, x), n in sorted(where.items()) if x == side}
            print(f"  model misses some static meets, model's batching {side} the profiles that "
                  f"meet: {sum(by.values())} {by}")


if __name__ == "__main__":
    main()
