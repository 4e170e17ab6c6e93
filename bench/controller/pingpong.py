#!/usr/bin/env python3
"""Step-by-step comparison of two controller_bench builds.

    bench/controller/pingpong.py [-n STEPS] [--passes K] [--queues N] [--busy P]
                                 [--publish-ms M] [--burst B] [--cpu C] [--seed S] BASE NEW

This VM's speed drifts by 30-50 % within minutes, and a binary's median depends on the phases
it happened to meet (paired.py alternates whole repetitions, tens of milliseconds each). Here
the two builds run their steps alternately on one CPU, handing a token over a pipe: BASE's step
i and NEW's step i run within a millisecond of each other, so the drift cancels in their
ratio. Each build runs its own copy of the benchmark's rig (BM_ControllerStep's synthetic
queues, shadow mode, 20 Hz snapshot times) and prints the controller's CPU time per step, the
source's own share left out ("controller alone" in docs/benchmarks/controller.md).

Each pass is a fresh pair of processes, BASE and NEW stepping first in turn, each pass with
another size of environment (see main()); the figure to trust is the median of the per-step
ratios NEW / BASE over all passes. An A/A run (one binary against a copy of itself) reads 1.00
within about 2 %.
"""
import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", type=int, default=1000, help="steps per binary and pass (default 1000)")
    ap.add_argument("--passes", type=int, default=6,
                    help="pairs of processes, each build stepping first in every other one "
                         "(default 6)")
    ap.add_argument("--queues", type=int, default=10000)
    ap.add_argument("--busy", type=int, default=100, help="%% of busy queues (default 100)")
    ap.add_argument("--publish-ms", type=int, default=1000, help="view interval (default 1000)")
    ap.add_argument("--burst", type=int, default=2,
                    help="steps per turn, the last one timed (default 2: the timed step finds "
                         "the caches as its own previous step left them, as in "
                         "BM_ControllerStep; 1: as the other build left them)")
    ap.add_argument("--cpu", type=int, default=max(os.sched_getaffinity(0)),
                    help="the CPU both run on (default: the last this process may use)")
    ap.add_argument("--seed", type=int, default=1, help="for the environment sizes (default 1)")
    ap.add_argument("base")
    ap.add_argument("new")
    a = ap.parse_args()
    if a.n < 1 or a.burst < 1 or a.passes < 1:
        ap.error("-n, --passes and --burst must be at least 1")
    # Both run from copies with names of one length, and each pass with a random amount of
    # environment: the size of argv and the environment moves the stack, and with it the
    # alignment of the step's stack frames, by a few per cent (one binary against a copy of
    # itself under another name read 1.03-1.05 every pass before this).
    tmp = tempfile.mkdtemp(prefix="pingpong.")
    try:
        measure(a, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def measure(a, tmp):
    bins = {}
    label = {}
    for role, path in (("base", a.base), ("new", a.new)):
        bins[role] = os.path.join(tmp, role[0])
        label[bins[role]] = path
        try:
            shutil.copy(path, bins[role])
        except OSError as e:
            sys.exit(f"{path}: {e.strerror}")
    rng = random.Random(a.seed)
    ratios = []
    pass_ratios = []
    per = {"base": [], "new": []}
    for k in range(a.passes):
        base_first = k % 2 == 0
        pad = "x" * rng.randrange(0, 4096, 16) + "y" * rng.randrange(16)
        if base_first:
            base_t, new_t = pass_once(bins["base"], bins["new"], a, pad, label)
        else:
            new_t, base_t = pass_once(bins["new"], bins["base"], a, pad, label)
        per["base"] += base_t
        per["new"] += new_t
        r = [n / b for b, n in zip(base_t, new_t) if b > 0]
        if r:
            pass_ratios.append(statistics.median(r))
        ratios += r
    if not ratios:
        sys.exit("no step took measurable CPU time")
    ratios.sort()

    def q(v, f):
        return v[int(f * (len(v) - 1))]

    title = (f"{a.queues} queues, {a.busy} % busy, view every {a.publish_ms} ms, "
             f"burst {a.burst}")
    print(f"{title}: controller alone, CPU us per step (median / p10), {a.passes} passes of "
          f"{a.n} steps each")
    for role, b in (("base", a.base), ("new", a.new)):
        v = sorted(per[role])
        med = statistics.median(v) / 1e3
        print(f"  {role:4} {b:56} {med:8.1f} / {q(v, 0.1) / 1e3:8.1f}   "
              f"{med * 20 / 1e4:5.2f} % of a core at 20 Hz")
    print(f"  NEW / BASE per step: median {statistics.median(ratios):.3f}  "
          f"(p25 {q(ratios, 0.25):.3f}, p75 {q(ratios, 0.75):.3f}; per pass "
          f"{min(pass_ratios):.3f}-{max(pass_ratios):.3f})")


def pass_once(first, second, a, pad, label):
    """One pass: `first` steps first. Returns (times of first, times of second), ns."""
    to_first_r, to_first_w = os.pipe()
    to_second_r, to_second_w = os.pipe()
    common = [f"--queues={a.queues}", f"--busy={a.busy}", f"--publish-ms={a.publish_ms}",
              f"--steps={a.n}", f"--burst={a.burst}"]

    # Output to files, not pipes: a process blocked on a full stdout pipe would stop handing
    # the token back.
    outs = [tempfile.TemporaryFile(mode="w+") for _ in range(4)]

    def spawn(binary, fd_in, fd_out, out, err):
        return subprocess.Popen(
            ["taskset", "-c", str(a.cpu), binary, f"--pingpong={fd_in},{fd_out}", *common],
            pass_fds=(fd_in, fd_out), stdout=out, stderr=err,
            env=dict(os.environ, PINGPONG_PAD=pad))

    p1 = spawn(first, to_first_r, to_second_w, outs[0], outs[1])
    p2 = spawn(second, to_second_r, to_first_w, outs[2], outs[3])
    os.close(to_first_r)
    os.close(to_second_r)
    os.close(to_second_w)
    os.write(to_first_w, b"x")  # the token: `first` steps first
    os.close(to_first_w)  # `second` holds its own copy and keeps handing the token back
    p1.wait()
    p2.wait()
    texts = []
    for f in outs:
        f.seek(0)
        texts.append(f.read())
        f.close()
    failed = [f"{label[b]}: exit {p.returncode}: {err.strip()[:300]}"
              for p, err, b in ((p1, texts[1], first), (p2, texts[3], second))
              if p.returncode != 0]
    if failed:
        sys.exit("\n".join(failed))

    def parse(out, b):
        try:
            # The first field: the ping-pong mode as first committed (1f8aed2), which older
            # checkouts get patched with, printed the source's time after it.
            return [int(line.split()[0]) for line in out.splitlines() if line.strip()]
        except (ValueError, IndexError):
            sys.exit(f"{label[b]}: unexpected output: {out[:200]!r}")

    t1, t2 = parse(texts[0], first), parse(texts[2], second)
    if len(t1) != a.n or len(t2) != a.n:
        sys.exit(f"expected {a.n} steps from each, got {len(t1)} and {len(t2)}")
    return t1, t2


if __name__ == "__main__":
    main()
