#!/usr/bin/env python3
"""bench/sim/sweep/gen.py: draws the randomized sweep's workloads.

gen.py --seed S --count N --out DIR [--duration D] writes DIR/sweep-S-NNN.yaml (workload files,
sim/workload.schema.json) and DIR/sweep.json (what was drawn for each, for the report). The same
seed gives the same files; each workload's own simulator seed is drawn too.

Dimensions, each drawn independently (uniform unless said):
- profile table: rdma (idle-gap timer, budget 256), net-eqe (rate-limit, 64), net-cqe (idle-gap,
  64);
- queues 1-64 (log-uniform), cores 1-8 (at most the queues);
- cost model: a built-in one (net, 512B, 4k, 64k) or, one time in three, a random inline one
  (irq 0.5-5 us, completion 0.2-5 us, poll 0.1-0.6 us, application 0-3 us; log-uniform);
- service: constant, exponential or log-normal with cv 0.2-3, mean 1-100 us (log-uniform);
- source: closed loop, Poisson or on/off (exponential or, one time in four, periodic on/off
  periods of 50 us-5 ms, duty 5-60 %);
- load: 5 %-130 % of the cores' capacity, where a core's capacity is what it completes with no
  moderation (every completion pays an interrupt: 1 / (irq + completion + app)). Open sources
  get the per-queue rate (on/off: averaged over on and off), closed ones the depth that Little's
  law gives at that load (depth x queues / (service + CPU per completion));
- phases: one (flat), a step (2 phases, or 3 returning to the first load) or a ramp (the load
  ramps linearly over the second phase; a closed loop steps its depth instead, the schema has
  no depth ramp), every phase's load drawn in the same 5-130 % range.
The sweep's simulated durations are short (DURATION in all, a tenth of it warm-up): counts,
not lengths, make a sweep.
"""
import argparse
import json
import math
import pathlib
import random

BUILTIN_COSTS = {  # sim/src/workload_yaml.cc builtin_cost_models(): irq, completion, poll, app
    "net": (1500, 500, 200, 1000),
    "512B": (2000, 1000, 300, 2000),
    "4k": (2000, 1500, 300, 2000),
    "64k": (2000, 3000, 300, 2000),
}
TABLES = {"rdma": ("idle-gap", 256), "net-eqe": ("rate-limit", 64), "net-cqe": ("idle-gap", 64)}


def log_uniform(rng, lo, hi):
    return math.exp(rng.uniform(math.log(lo), math.log(hi)))


def us(ns):
    """A duration the workload loader reads: whole nanoseconds."""
    return f"{int(round(ns))}ns"


def draw(rng, seed, index, duration_ns):
    name = f"sweep-{seed}-{index:03d}"
    table = rng.choice(sorted(TABLES))
    timer, budget = TABLES[table]
    queues = max(1, min(64, int(round(log_uniform(rng, 1, 64)))))
    cores = rng.randint(1, min(8, queues))
    if rng.random() < 1 / 3:
        irq = log_uniform(rng, 500, 5000)
        comp = log_uniform(rng, 200, 5000)
        poll = log_uniform(rng, 100, 600)
        app = 0.0 if rng.random() < 0.25 else log_uniform(rng, 100, 3000)
        cost_name = "inline"
        cost_yaml = (f"{{irq: {us(irq)}, completion: {us(comp)}, poll: {us(poll)}, "
                     f"app: {us(app)}}}")
    else:
        cost_name = rng.choice(sorted(BUILTIN_COSTS))
        irq, comp, poll, app = BUILTIN_COSTS[cost_name]
        cost_yaml = cost_name
    service_kind = rng.choice(["constant", "exponential", "lognormal"])
    service_mean = log_uniform(rng, 1000, 100_000)
    cv = round(rng.uniform(0.2, 3.0), 2) if service_kind == "lognormal" else (
        1.0 if service_kind == "exponential" else 0.0)
    if service_kind == "constant":
        service_yaml = us(service_mean)
    elif service_kind == "exponential":
        service_yaml = f"{{dist: exponential, mean: {us(service_mean)}}}"
    else:
        service_yaml = f"{{dist: lognormal, mean: {us(service_mean)}, cv: {cv}}}"
    source = rng.choice(["closed", "poisson", "onoff"])
    load = rng.uniform(0.05, 1.30)
    cpu_per_completion = irq + comp + app  # unmoderated
    capacity = cores * 1e9 / cpu_per_completion  # completions/s over all cores
    rate_q = load * capacity / queues
    shape = rng.choice(["flat", "step", "ramp"])
    # Each phase's load drawn in the same 5-130 % range (so a step or ramp goes anywhere in it),
    # as a factor of the first phase's.
    factors = [1.0]
    if shape != "flat":
        factors.append(rng.uniform(0.05, 1.30) / load)
        if shape == "step" and rng.random() < 0.5:
            factors.append(1.0)
    factors = [round(f, 4) for f in factors]
    src = {"kind": source, "flow": "main", "bytes": rng.choice([512, 1500, 4096, 65536])}
    info = {"name": name, "table": table, "queues": queues, "cores": cores, "cost": cost_name,
            "costs_ns": [round(irq), round(comp), round(poll), round(app)],
            "service": service_kind, "service_us": round(service_mean / 1e3, 2), "cv": cv,
            "source": source, "load": round(load, 3), "shape": shape, "factors": factors}
    if source == "closed":
        # Little's law at the drawn load: depth x queues = X x (service + CPU per completion).
        depth = load * capacity * (service_mean + cpu_per_completion) / 1e9 / queues
        depth = max(1, min(256, int(round(depth))))
        src["depth"] = depth
        info["depth"] = depth
        if shape == "ramp":
            shape = info["shape"] = "depth-step"
    elif source == "poisson":
        src["rate"] = f"{rate_q:.1f}"
    else:
        periodic = rng.random() < 0.25
        on = log_uniform(rng, 50_000, 5_000_000)
        duty = rng.uniform(0.05, 0.6)
        off = on * (1 - duty) / duty
        src.update({"rate": f"{rate_q / duty:.1f}", "on_time": us(on), "off_time": us(off)})
        if periodic:
            src["periodic"] = True
        info.update({"on_us": round(on / 1e3, 1), "duty": round(duty, 3), "periodic": periodic})
    phases = []
    n = len(factors)
    for i, f in enumerate(factors):
        ph = {"name": f"p{i}", "duration": us(duration_ns / n)}
        if source == "closed":
            ph["depth"] = max(1, min(256, int(round(src["depth"] * f))))
        else:
            ph["load"] = f
            if shape == "ramp" and i == 1:
                ph["ramp"] = True
        phases.append(ph)
    lines = [
        "version: 1",
        f"name: {name}",
        f"description: \"sweep seed {seed} #{index}: {table}, {queues} queues on {cores} cores, "
        f"cost {cost_name}, {source}, load {load:.0%}, {shape}\"",
        f"seed: {rng.randrange(1, 2**31)}",
        f"queues: {queues}",
        f"table: {table}",
        f"warmup: {us(duration_ns / 10)}",
        f"window: {us(duration_ns / 100)}",
        "stages:",
        "  - name: host",
        f"    service: {service_yaml}",
        f"    timer: {timer}",
        f"    poll_budget: {budget}",
        f"    cost: {cost_yaml}",
        f"    cores: {cores}",
        "sources:",
        "  - " + "\n    ".join(f"{k}: {json.dumps(v) if isinstance(v, bool) else v}"
                              for k, v in src.items()),
        "phases:",
    ]
    for ph in phases:
        lines.append("  - {" + ", ".join(f"{k}: {json.dumps(v) if isinstance(v, bool) else v}"
                                          for k, v in ph.items()) + "}")
    return name, "\n".join(lines) + "\n", info


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=300)
    ap.add_argument("--duration", type=float, default=0.4, help="simulated seconds per workload")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    out = pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(a.seed)
    infos = []
    for i in range(a.count):
        name, text, info = draw(rng, a.seed, i, a.duration * 1e9)
        (out / f"{name}.yaml").write_text(text)
        infos.append(info)
    (out / "sweep.json").write_text(json.dumps(
        {"seed": a.seed, "count": a.count, "duration_s": a.duration, "workloads": infos},
        indent=1) + "\n")


if __name__ == "__main__":
    main()
