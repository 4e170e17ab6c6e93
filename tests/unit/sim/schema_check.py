#!/usr/bin/env python3
"""sim/workload.schema.json against the shipped workloads and the files it must refuse.

usage: schema_check.py SCHEMA WORKLOAD_DIR TEST_DIR
  - the schema itself is valid draft 2020-12;
  - every WORKLOAD_DIR/*.yaml and TEST_DIR/good/*.yaml validates;
  - every TEST_DIR/bad/*.yaml carrying a '# schema: reject' line is rejected.
Exit 0 pass, 1 fail, 77 skipped (python3-jsonschema or python3-yaml missing).

YAML is read with YAML 1.2 core-schema types, as dimctl's yaml-cpp reader does.
"""
import json
import pathlib
import re
import sys

try:
    import jsonschema
    import yaml
except ImportError as e:  # the only reason to skip
    print(f"SKIP: {e.name} is not installed (Debian: apt-get install python3-jsonschema python3-yaml)")
    sys.exit(77)


class Yaml12Loader(yaml.SafeLoader):
    """SafeLoader with the YAML 1.2 core schema's implicit types only."""


Yaml12Loader.yaml_implicit_resolvers = {}
for tag, regexp, first in [
    ("tag:yaml.org,2002:bool", r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF"),
    ("tag:yaml.org,2002:null", r"^(?:~|null|Null|NULL|)$", "~nN\0"),
    ("tag:yaml.org,2002:int", r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$", "-+0123456789"),
    ("tag:yaml.org,2002:float",
     r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
     "-+0123456789."),
]:
    Yaml12Loader.add_implicit_resolver(tag, re.compile(regexp), list(first))
Yaml12Loader.add_implicit_resolver("tag:yaml.org,2002:null", re.compile(r"^$"), [""])
Yaml12Loader.add_constructor("tag:yaml.org,2002:bool",
                             lambda loader, node: loader.construct_scalar(node).lower() == "true")
Yaml12Loader.add_constructor("tag:yaml.org,2002:int",
                             lambda loader, node: int(loader.construct_scalar(node), 0))


def load_all(path):
    with open(path, encoding="utf-8") as fh:
        return list(yaml.load_all(fh, Loader=Yaml12Loader))


def main():
    schema_path, workloads, tests = (pathlib.Path(a) for a in sys.argv[1:4])
    schema = json.loads(schema_path.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    failures = []

    must_pass = sorted(workloads.glob("*.yaml")) + sorted((tests / "good").glob("*.yaml"))
    if len(list(workloads.glob("*.yaml"))) < 8:
        failures.append(f"{workloads}: expected the W1..W8 workloads")
    for path in must_pass:
        docs = load_all(path)
        errors = list(validator.iter_errors({} if docs[0] is None else docs[0]))
        for err in errors:
            where = "/".join(str(p) for p in err.absolute_path) or "(document)"
            failures.append(f"{path}: {where}: {err.message}")
        print(f"{'ok  ' if not errors else 'FAIL'} accepted  {path.name}")

    rejects = 0
    for path in sorted((tests / "bad").glob("*.yaml")):
        if "# schema: reject" not in path.read_text().splitlines():
            continue
        rejects += 1
        docs = load_all(path)
        # A second document is what dimctl refuses; the schema sees one document at a time.
        errors = [] if len(docs) == 1 else ["more than one document"]
        errors += list(validator.iter_errors({} if docs[0] is None else docs[0]))
        if not errors:
            failures.append(f"{path}: the schema accepts a workload dimctl refuses")
        print(f"{'ok  ' if errors else 'FAIL'} rejected  {path.name}")
    if rejects < 20:
        failures.append(f"only {rejects} bad workloads are marked '# schema: reject' (want >= 20)")

    for f in failures:
        print("FAIL:", f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
