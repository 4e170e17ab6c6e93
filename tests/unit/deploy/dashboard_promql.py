#!/usr/bin/env python3
"""Every PromQL query of a Grafana dashboard, with Grafana's variables substituted.

Queries: each panel target's `expr` (rows' nested panels included), each annotation's `expr`,
and each query variable's `label_values(SELECTOR, LABEL)` / `query_result(EXPR)` as the PromQL
it runs (`group by (LABEL) (SELECTOR)` / EXPR). A Prometheus target without `expr`, a variable
the dashboard does not define, or a `$` left after substitution is an error (exit 1).

  dashboard_promql.py rules DASHBOARD OUT.yml [options]
      writes a Prometheus rules file, one recording rule per query (record name
      dashboard:<where>, e.g. dashboard:panel_7_A), for `promtool check rules OUT.yml`
  dashboard_promql.py list DASHBOARD [options]
      one JSON object per line: {"record", "title", "expr"}

options:
  --rate-interval D  value of $__rate_interval (default 1m); --interval D ($__interval, 15s);
  --range D          ($__range, 1h)
  --var NAME=VALUE   a variable's value; otherwise a multi/all variable is its allValue
                     (.* when none: Grafana's "All" is a regex of every value), another its
                     current value or its first option
"""
import argparse
import json
import re
import sys

DURATION = re.compile(r"^[0-9]+(ms|s|m|h|d|w|y)$")


def seconds(d):
    units = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}
    m = re.match(r"^([0-9]+)(ms|s|m|h|d|w|y)$", d)
    return int(m.group(1)) * units[m.group(2)]


def builtins(args):
    rng = seconds(args.range)
    interval = seconds(args.interval)
    return {
        "__rate_interval": args.rate_interval,
        "__rate_interval_ms": str(int(seconds(args.rate_interval) * 1000)),
        "__interval": args.interval,
        "__interval_ms": str(int(interval * 1000)),
        "__range": args.range,
        "__range_s": str(int(rng)),
        "__range_ms": str(int(rng * 1000)),
    }


def variable_values(dashboard, overrides):
    values = {}
    for v in dashboard.get("templating", {}).get("list", []):
        name = v.get("name")
        if not name:
            continue
        if v.get("includeAll") or v.get("multi"):
            values[name] = v.get("allValue") or ".*"
        elif isinstance(v.get("current"), dict) and isinstance(v["current"].get("value"), str):
            values[name] = v["current"]["value"]
        elif v.get("options"):
            values[name] = str(v["options"][0].get("value", ""))
        elif isinstance(v.get("query"), str) and v.get("type") in ("custom", "interval", "constant"):
            values[name] = v["query"].split(",")[0].strip()
        else:
            values[name] = ""
    values.update(overrides)
    return values


# $name, ${name}, ${name:format}, [[name]], [[name:format]]; not $1, label_replace()'s reference
# to a regex group, which Grafana leaves alone as no variable has such a name.
VAR = re.compile(r"\$\{(\w+)(?::[^}]*)?\}|\[\[(\w+)(?::[^\]]*)?\]\]|\$([A-Za-z_]\w*)")


def substitute(expr, values, where, errors):
    def repl(m):
        name = m.group(1) or m.group(2) or m.group(3)
        if name not in values:
            errors.append(f"{where}: ${name} is not a variable of the dashboard nor a Grafana built-in")
            return m.group(0)
        return values[name]

    out = VAR.sub(repl, expr)
    if re.search(r"\$(?!\d)", out) and not errors:
        errors.append(f"{where}: a '$' is left after substitution: {out}")
    return out


def queries(dashboard):
    """(record suffix, title, raw expr or None) for every query of the dashboard."""
    def panels(ps):
        for p in ps or []:
            yield p
            yield from panels(p.get("panels"))

    for p in panels(dashboard.get("panels")):
        for t in p.get("targets") or []:
            ds = t.get("datasource") or p.get("datasource") or {}
            if isinstance(ds, dict) and ds.get("type") not in (None, "prometheus"):
                continue
            yield f"panel_{p.get('id')}_{t.get('refId', '')}", p.get("title", ""), t.get("expr")
    for i, a in enumerate(dashboard.get("annotations", {}).get("list", [])):
        if (a.get("datasource") or {}).get("type") == "prometheus":
            yield f"annotation_{i}", a.get("name", ""), a.get("expr") or (a.get("target") or {}).get("expr")
    for v in dashboard.get("templating", {}).get("list", []):
        if v.get("type") != "query":
            continue
        q = v.get("query")
        q = q.get("query") if isinstance(q, dict) else q
        m = re.match(r"^\s*label_values\((.*),\s*(\w+)\s*\)\s*$", q or "", re.S)
        if m:
            yield f"variable_{v['name']}", v.get("label", v["name"]), f"group by ({m.group(2)}) ({m.group(1)})"
            continue
        m = re.match(r"^\s*query_result\((.*)\)\s*$", q or "", re.S)
        if m:
            yield f"variable_{v['name']}", v.get("label", v["name"]), m.group(1)
        # label_values(LABEL), label_names(), metrics(REGEX): no PromQL to check.


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=["rules", "list"])
    ap.add_argument("dashboard")
    ap.add_argument("out", nargs="?")
    ap.add_argument("--rate-interval", default="1m")
    ap.add_argument("--interval", default="15s")
    ap.add_argument("--range", default="1h")
    ap.add_argument("--var", action="append", default=[])
    args = ap.parse_args()
    for d in (args.rate_interval, args.interval, args.range):
        if not DURATION.match(d):
            ap.error(f"not a duration: {d}")
    if args.mode == "rules" and not args.out:
        ap.error("rules needs OUT.yml")

    with open(args.dashboard) as f:
        dashboard = json.load(f)
    overrides = dict(v.split("=", 1) for v in args.var)
    values = {**variable_values(dashboard, overrides), **builtins(args)}
    errors, found = [], []
    for record, title, expr in queries(dashboard):
        where = f"{args.dashboard}: {record} ({title})"
        if not isinstance(expr, str) or not expr.strip():
            errors.append(f"{where}: no expr")
            continue
        found.append({"record": f"dashboard:{record}", "title": title,
                      "expr": substitute(expr, values, where, errors)})
    for e in errors:
        print(e, file=sys.stderr)
    if not found:
        print(f"{args.dashboard}: no PromQL query found", file=sys.stderr)
        return 1
    if args.mode == "list":
        for q in found:
            print(json.dumps(q))
    else:
        # JSON is YAML: promtool reads this as a rules file.
        rules = {"groups": [{"name": "dashboard", "rules": [{"record": q["record"], "expr": q["expr"]}
                                                           for q in found]}]}
        with open(args.out, "w") as f:
            json.dump(rules, f, indent=1)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
