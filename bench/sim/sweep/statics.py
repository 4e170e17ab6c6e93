#!/usr/bin/env python3
"""How far the sweep's rule is from a fixed choice: every static profile of a workload's table,
for the whole run, against the oracle the sweep saved.

usage: statics.py [--dimctl PATH] [--jobs N] [--save FILE] DIR [DIR...]

DIR is a seed directory bench/sim/sweep/run.sh wrote (BUILD/bench-sweep/seed-S: the workloads
and one `dimctl sim --json` document each). Per seed it prints how many workloads the best single
static profile meets the oracle rule on (chosen in hindsight: any profile of the table that
meets it), how many dimctl-model meets, and, for the model's misses that some static profile
meets, where the model's batching sits against the profiles that meet: below all of them (it
under-moderates), inside their range, or above. The model's batching is matched to the static
profile with the nearest completions per interrupt over the run. Then every workload is classed
by the lowest profile index that meets the rule (0; only 1-2; only 3 or above; none) per table and
per kind of source (closed loop, or open: Poisson and on/off), with how many of each class the
model meets: where the classes the model misses sit says what kind of choice it gets wrong.
--save writes every static run's totals (JSON, keyed by workload file) for later analysis.
Reads the rule from report.py; standard library only. About 2 minutes for both seeds on 2 cores.
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
CLASSES = ("0", "only 1-2", "only 3+", "none")


def lowest_class(ok):
    """The class of a workload from the indexes of the static profiles that meet the rule."""
    if not ok:
        return "none"
    return "0" if ok[0] == 0 else "only 1-2" if ok[0] <= 2 else "only 3+"


def statics(dimctl, workload, extra=()):
    """Every static profile of the workload's table over its whole run (`extra`: more `dimctl
    sim` options, e.g. --seed): their totals, in index order."""
    table = next(line.split(":", 1)[1].strip() for line in workload.read_text().splitlines()
                 if line.startswith("table:"))
    policies = ",".join(f"static:{i}" for i in range(TABLE_SIZES[table]))
    r = subprocess.run([dimctl, "sim", "--workload", str(workload), "--json", *extra, "--policy",
                        policies], capture_output=True, text=True, check=False)
    if r.returncode != 0:
        raise RuntimeError(f"{workload}: dimctl sim failed: {r.stderr[:300]}")
    return [run["total"] for run in json.loads(r.stdout)["runs"]]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dimctl", default="build/userspace/cli/dimctl")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--save", type=pathlib.Path, help="write every static run's totals here (JSON)")
    ap.add_argument("dirs", nargs="+", type=pathlib.Path)
    args = ap.parse_args()
    saved = {}
    for d in args.dirs:
        _, workloads = report.load_seed(d)
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as ex:
            totals = list(ex.map(lambda w: statics(args.dimctl, d / f"{w.name}.yaml"), workloads))
        static_meets = model_meets = 0
        where = collections.Counter()
        # Per (table, source kind, class): the workloads, and how many of them the model meets.
        classes = collections.Counter()
        model_in = collections.Counter()
        for w, runs in zip(workloads, totals):
            saved[str(d / f"{w.name}.yaml")] = runs
            ok = [i for i, t in enumerate(runs)
                  if report.meets(report.ratios(t, w.oracle["total"], w.queues))]
            key = (w.info["table"], "closed" if w.info["source"] == "closed" else "open",
                   lowest_class(ok))
            classes[key] += 1
            model_in[key] += w.meets("dimctl-model")
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
        print("  lowest static index that meets the rule: dimctl-model meets / workloads")
        print("  | table, source | " + " | ".join(CLASSES) + " |")
        for table, kind in sorted({(t, k) for t, k, _ in classes}):
            cells = " | ".join(f"{model_in[(table, kind, c)]} / {classes[(table, kind, c)]}"
                               for c in CLASSES)
            print(f"  | {table}, {kind} | {cells} |")
    if args.save:
        args.save.write_text(json.dumps(saved))


if __name__ == "__main__":
    main()
