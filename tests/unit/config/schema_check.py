#!/usr/bin/env python3
"""deploy/config/dimctl.schema.json against the configs we ship and the configs it must refuse.

usage: schema_check.py DEPLOY_CONFIG_DIR TEST_DIR
  - the schema itself is valid draft 2020-12;
  - every deploy/config/**/*.yaml and TEST_DIR/good/*.yaml validates;
  - every TEST_DIR/bad/*.yaml carrying a '# schema: reject' line is rejected.
Exit 0 pass, 1 fail, 77 skipped (python3-jsonschema or python3-yaml missing).

YAML is read with YAML 1.2 core-schema types (as yaml-cpp-based dimctl and editors using the
schema do): PyYAML's default YAML 1.1 resolver would turn `off` into False and `on` into True.
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
# An empty scalar (no first character) must resolve to null as well.
Yaml12Loader.add_implicit_resolver("tag:yaml.org,2002:null", re.compile(r"^$"), [""])


def bool_constructor(loader, node):
    return loader.construct_scalar(node).lower() == "true"


def int_constructor(loader, node):
    return int(loader.construct_scalar(node), 0)


Yaml12Loader.add_constructor("tag:yaml.org,2002:bool", bool_constructor)
Yaml12Loader.add_constructor("tag:yaml.org,2002:int", int_constructor)


def load(path):
    with open(path, encoding="utf-8") as fh:
        return yaml.load(fh, Loader=Yaml12Loader)


def main():
    deploy = pathlib.Path(sys.argv[1])
    tests = pathlib.Path(sys.argv[2])
    schema = json.loads((deploy / "dimctl.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    failures = []

    must_pass = sorted(deploy.rglob("*.yaml")) + sorted((tests / "good").glob("*.yaml"))
    if len(list(deploy.rglob("*.yaml"))) < 3:
        failures.append(f"{deploy}: expected dimctl.yaml and at least two examples")
    for path in must_pass:
        doc = load(path)
        errors = list(validator.iter_errors({} if doc is None else doc))
        for err in errors:
            where = "/".join(str(p) for p in err.absolute_path) or "(document)"
            failures.append(f"{path}: {where}: {err.message}")
        print(f"{'ok  ' if not errors else 'FAIL'} accepted  {path.name}")

    rejects = 0
    for path in sorted((tests / "bad").glob("*.yaml")):
        if "# schema: reject" not in path.read_text().splitlines():
            continue
        rejects += 1
        doc = load(path)
        errors = list(validator.iter_errors({} if doc is None else doc))
        if not errors:
            failures.append(f"{path}: the schema accepts a config dimctl refuses")
        best = jsonschema.exceptions.best_match(errors) if errors else None
        print(f"{'ok  ' if errors else 'FAIL'} rejected  {path.name}"
              + (f"  ({best.message[:100]})" if best else ""))
    if rejects < 10:
        failures.append(f"only {rejects} bad configs are marked '# schema: reject' (want >= 10)")

    for f in failures:
        print("FAIL:", f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
