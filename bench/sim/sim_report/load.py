"""Loading: the documents of one bench/sim/run.sh, and what the dimctl-* policies ran with."""
import json
import pathlib

# (timer us, count) of each profile, as dim/include/dim/profile.h (RX tables for net).
TABLES = {
    "rdma": [(1, 1), (1, 4), (2, 4), (2, 8), (4, 8), (16, 8), (16, 16), (32, 16), (32, 32)],
    "net-eqe": [(1, 256), (8, 256), (64, 256), (128, 256), (256, 256)],
    "net-cqe": [(2, 256), (8, 128), (16, 64), (32, 64), (64, 64)],
}


class Run:
    """One `dimctl sim` invocation: a workload (or variant) under every policy."""

    def __init__(self, run_id, cmd, doc):
        self.id = run_id
        self.base, _, self.variant = run_id.partition("@")
        self.cmd = cmd
        self.doc = doc
        self.w = doc["workload"]
        self.policies = [r["policy"] for r in doc["runs"]]
        self.by_policy = {r["policy"]: r for r in doc["runs"]}

    def phase_names(self):
        return [p["name"] for p in self.w["phases"]]

    def phase(self, policy, name=None):
        r = self.by_policy[policy]
        if name is None:
            return r["total"]
        return next(p for p in r["phases"] if p["phase"] == name)

    def flags(self):
        """The flags a variant adds to its workload file (after --json --timeline)."""
        return self.cmd.partition("--timeline")[2].strip()

    def caption(self):
        w = self.w
        variant = f" (here with `{self.flags()}`)" if self.flags() else ""
        return (f"`{self.id}`: {w['description']}{variant}; {w['queues']} "
                f"queue{'s' if w['queues'] > 1 else ''}, table {w['table']}, cost model "
                f"**{w['cost_model']}**, seed {w['seed']}")


def load_runs(directory):
    runs = {}
    manifest = pathlib.Path(directory) / "manifest.tsv"
    for line in manifest.read_text().splitlines():
        if not line.strip():
            continue
        run_id, cmd = line.split("\t", 1)
        with open(pathlib.Path(directory) / f"{run_id}.json", encoding="utf-8") as fh:
            runs[run_id] = Run(run_id, cmd, json.load(fh))
    return runs


class ReportError(Exception):
    """The runs do not say something the report needs."""


class Controller:
    """What the daemon's Controller ran with under the dimctl-* policies, as each run's
    `controller` object in the JSON says (userspace/cli/cmd_sim.cc): the period, and for the
    model policy its change budget and default costs. The report quotes and judges by these, so
    they come from the runs; a value the runs disagree on or do not carry is an error when the
    report needs it."""

    def __init__(self, runs):
        self.period_of = {}  # policy name -> its period (dimctl-rdma@5ms has its own)
        self._seen = {"period_ns": set(), "max_changes_per_s": set(), "costs": set()}
        for r in runs.values():
            for x in r.doc["runs"]:
                c = x.get("controller")
                if c is None:
                    continue
                self.period_of[x["policy"]] = c["period_ns"]
                if "@" not in x["policy"]:
                    self._seen["period_ns"].add(c["period_ns"])
                if "max_changes_per_s" in c:
                    self._seen["max_changes_per_s"].add(c["max_changes_per_s"])
                if "completion_cost_ns" in c:
                    self._seen["costs"].add((c["completion_cost_ns"], c["interrupt_cost_ns"]))

    def _one(self, key, what):
        values = self._seen[key]
        if len(values) != 1:
            raise ReportError(f"report.py: the runs give {len(values)} values for {what} "
                              f"({sorted(values)}), want one (dimctl sim --json writes it per "
                              "dimctl-* run under `controller`)")
        return next(iter(values))

    @property
    def period_ns(self):
        """The control period of the dimctl-* policies run without @PERIOD."""
        return self._one("period_ns", "the control period")

    @property
    def change_budget(self):
        """The model policy's change budget (changes per second)."""
        return self._one("max_changes_per_s", "the model's change budget")

    @property
    def model_costs_us(self):
        """The model policy's default costs in us: (per completion, per interrupt)."""
        cc, ci = self._one("costs", "the model's default costs")
        return cc / 1e3, ci / 1e3
