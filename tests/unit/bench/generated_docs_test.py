#!/usr/bin/env python3
"""The generated reports name only workloads and policies that still exist.

    generated_docs_test.py REPO_ROOT

Reads every generated page (docs/sim/report.md, docs/sim/full-report.md, docs/sim/sweep-seed*.md,
docs/sim/sweep-eff-seed*.md and the generated sections of docs/BENCHMARKS.md) and collects the workloads and policies each
states: the `dimctl sim` commands' --workload / --trace / --policy arguments, workload and trace
paths, backticked and bold names, table cells and headings. It fails, naming the page and the
name, when a workload is no longer a file under bench/sim/workloads/ (a trace no longer under
tests/fixtures/traces/), or a policy is not one `dimctl sim` accepts: none, static:IX, oracle
(@LAG), kernel-TABLE with TABLE from sim/workload.schema.json, dimctl-ALGORITHM (@PERIOD) and
dimctl-model-host with ALGORITHM from deploy/config/dimctl.schema.json, the model ones with an
optional -eff:BUDGET (every algorithm but off
and static, which the simulator has as none and static:IX). The host benchmark's section is
judged by bench/host's policies (none, static-Nus, the daemon's algorithm from the same schema
with `-idle0` variants, dimctl-model-effB; the former static:IX). Each page must also say the
commit and the date it was generated at. A stale page is regenerated with the command its header
names. Standard library only; runs no code of the tree.
"""
import json
import pathlib
import re
import sys

ROOT = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
WORKLOADS = ROOT / "bench/sim/workloads"
TRACES = ROOT / "tests/fixtures/traces"

NAME = r"[a-z][a-z0-9_.:-]*(?:@[0-9a-z.]+)?"
POLICY_LIKE = re.compile(r"(none|oracle|static:\d+|static-\d+us|kernel-[a-z0-9_-]+|"
                         r"dimctl-[a-z0-9_-]+(?::[0-9a-z.]+)?)(@[0-9a-z.]+)?")
WORKLOAD_LIKE = re.compile(r"(trace-[a-z0-9][\w-]*[a-z0-9]|[a-z]\d+-[a-z0-9][\w-]*[a-zA-Z0-9])"
                           r"(@[\w.-]*[a-zA-Z0-9])?")
DURATION = re.compile(r"\d+(\.\d+)?(ns|us|ms|s)")


def schema_algorithms():
    """The algorithm names the config accepts: the alternatives of the schema's pattern."""
    schema = json.loads((ROOT / "deploy/config/dimctl.schema.json").read_text())
    pattern = schema["$defs"]["rule"]["properties"]["algorithm"]["pattern"]
    m = re.fullmatch(r"\^\((.*)\)\$", pattern)
    if not m:
        raise SystemExit(f"dimctl.schema.json: algorithm pattern {pattern!r} is not ^(a|b|...)$")
    return pattern, m.group(1).split("|")


def schema_tables():
    schema = json.loads((ROOT / "sim/workload.schema.json").read_text())
    return set(schema["properties"]["table"]["enum"])


ALGORITHM_PATTERN, ALTERNATIVES = schema_algorithms()
# Plain names, without the former label spellings (underscores), off and static:IX.
CONTROLLER = {a for a in ALTERNATIVES if re.fullmatch(r"[a-z-]+", a) and a != "off"}
STATIC = re.compile(next((a for a in ALTERNATIVES if a.startswith("static:")), r"static:\d+"))
TABLES = schema_tables()


def sim_policy_ok(name):
    base, at, arg = name.partition("@")
    if at and not DURATION.fullmatch(arg):
        return False
    if base == "oracle":
        return True
    if base.startswith("dimctl-"):
        algo = base[len("dimctl-"):]
        algo, eff, budget = algo.partition("-eff:")
        if eff and not (algo.startswith("model") and DURATION.fullmatch(budget)):
            return False  # -eff:BUDGET: the model policies only
        return algo in CONTROLLER or (algo == "model-host" and "model" in CONTROLLER)
    if at:  # only dimctl-* (@PERIOD) and oracle (@LAG) take @
        return False
    if base == "none":
        return True
    if base.startswith("static:"):
        return bool(STATIC.fullmatch(base))
    if base.startswith("kernel-"):
        return base[len("kernel-"):] in TABLES
    return False


def host_policy_ok(name):
    """bench/host/run.py: none, static-Nus (static:IX in older runs), dimctl-ALGORITHM[-idle0]
    (the daemon's algorithm), dimctl-model-effB (the model's efficiency objective, budget B us)."""
    if name == "none" or re.fullmatch(r"static-[1-9]\d*us", name):
        return True
    if name.startswith("static:"):
        return bool(STATIC.fullmatch(name))
    if re.fullmatch(r"dimctl-model-eff[1-9]\d*", name):
        return "model" in CONTROLLER
    m = re.fullmatch(r"dimctl-([a-z-]+?)(-idle0)?", name)
    return bool(m) and m.group(1) in CONTROLLER


def workload_ok(name):
    base = name.split("@", 1)[0]
    if base.startswith("trace-"):
        stem = base[len("trace-"):]
        stem = stem[:-len("-host-costs")] if stem.endswith("-host-costs") else stem
        return (TRACES / f"{stem}.dtr").is_file()
    return (WORKLOADS / f"{base}.yaml").is_file()


def policies_in(text):
    """Every policy name the text states, from the places a report states one."""
    found = set()
    for m in re.finditer(r"--policy[ =](\S+)", text):
        found.update(p for p in m.group(1).split(",") if p)
    spans = re.findall(r"`([^`\s]+)`", text) + re.findall(r"\*\*([^*\s]+)\*\*", text)
    for line in text.splitlines():
        if line.startswith("|"):
            for cell in line.strip("|").split("|"):
                words = cell.strip().replace("`", "").replace("*", "").split()
                if words:
                    spans.append(words[0].rstrip(":,"))
    for s in spans:
        s = s.rstrip(":,")
        if POLICY_LIKE.fullmatch(s):
            found.add(s)
    return found


def workloads_in(text):
    found = set()
    text = re.sub(r"\]\([^)]*\)", "]()", text)  # link and image targets are files, not names
    for m in re.finditer(r"--workload[ =]\S*?bench/sim/workloads/([\w.-]+?)\.yaml", text):
        found.add(m.group(1))
    for m in re.finditer(r"bench/sim/workloads/([\w.-]+?)(?:\.yaml)?(?=[\s,.;:)`]|$)", text):
        found.add(m.group(1))
    for m in re.finditer(r"tests/fixtures/traces/([\w.-]+?)\.dtr", text):
        found.add("trace-" + m.group(1))
    candidates = re.findall(r"`([^`\s]+)`", text)
    candidates += re.findall(r"^#+\s+(\S+)\s*$", text, re.M)
    candidates += [m.group(0) for m in re.finditer(r"(?<![\w/.-])" + WORKLOAD_LIKE.pattern, text)]
    for c in candidates:
        if WORKLOAD_LIKE.fullmatch(c):
            found.add(c)
    return found


def section(text, name):
    m = re.search(rf"<!-- {name}:begin -->(.*?)<!-- {name}:end -->", text, re.S)
    return m.group(1) if m else None


def stamped(text):
    return (re.search(r"commit `[0-9a-f]{7,40}(-dirty)?`", text) and
            re.search(r"\b20\d\d-\d\d-\d\d\b", text))


def pages():
    """(label, text, policy check, needs a stamp) for every generated page."""
    out = []
    for rel in ("docs/sim/report.md", "docs/sim/full-report.md"):
        p = ROOT / rel
        if p.exists():
            out.append((rel, p.read_text(), sim_policy_ok, True))
        else:
            out.append((rel, None, None, True))
    for p in sorted((ROOT / "docs/sim").glob("sweep-seed*.md")):
        out.append((str(p.relative_to(ROOT)), p.read_text(), sim_policy_ok, True))
    for p in sorted((ROOT / "docs/sim").glob("sweep-eff-seed*.md")):
        out.append((str(p.relative_to(ROOT)), p.read_text(), sim_policy_ok, True))
    bench = (ROOT / "docs/BENCHMARKS.md").read_text()
    out.append(("docs/BENCHMARKS.md (sweep section)", section(bench, "sweep"), sim_policy_ok, True))
    if "sweep-efficiency:begin" in bench:
        out.append(("docs/BENCHMARKS.md (sweep efficiency section)",
                    section(bench, "sweep-efficiency"), sim_policy_ok, True))
    out.append(("docs/BENCHMARKS.md (host section)", section(bench, "host"), host_policy_ok, False))
    return out


def main():
    errors = []
    checked = 0
    for label, text, policy_ok, needs_stamp in pages():
        if text is None:
            errors.append(f"{label}: missing (or its markers are)")
            continue
        for w in sorted(workloads_in(text)):
            checked += 1
            if not workload_ok(w):
                where = "tests/fixtures/traces" if w.startswith("trace-") else "bench/sim/workloads"
                errors.append(f"{label}: workload '{w}' is not in {where}")
        for p in sorted(policies_in(text)):
            checked += 1
            if not policy_ok(p):
                errors.append(f"{label}: policy '{p}' is not one the simulator accepts "
                              f"(tables {sorted(TABLES)}, algorithms {ALGORITHM_PATTERN})")
        if "sweep-seed" in label or "sweep-eff-seed" in label:
            seed = re.search(r"sweep-(?:eff-)?seed(\d+)\.md", label).group(1)
            for m in re.finditer(r"\bsweep-(\d+)-\d{3}\b", text):
                if m.group(1) != seed:
                    errors.append(f"{label}: workload '{m.group(0)}' is not of seed {seed}")
            for m in re.finditer(r"^\| sweep-\d+-\d{3} \| ([a-z-]+),", text, re.M):
                checked += 1
                if m.group(1) not in TABLES:
                    errors.append(f"{label}: table '{m.group(1)}' is not one the workload "
                                  f"schema accepts ({sorted(TABLES)})")
        if needs_stamp and not stamped(text):
            errors.append(f"{label}: no commit and date it was generated at")
    for e in errors:
        print(f"FAIL: {e}")
    print(f"generated_docs_test: {checked} names checked in {len(pages())} pages, "
          f"{len(errors)} stale")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
