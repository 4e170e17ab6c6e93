#!/usr/bin/env python3
"""A JSON schema that editors validate dimctl's YAML files against, checked against dimctl itself.

usage: schema_check.py SCHEMA SHIPPED_DIR MIN_SHIPPED TEST_DIR MIN_REJECTS NOUN
  - the schema itself is valid draft 2020-12;
  - every SHIPPED_DIR/**/*.yaml (at least MIN_SHIPPED of them) and TEST_DIR/good/*.yaml validates
    and is one document;
  - every TEST_DIR/bad/*.yaml carrying a '# schema: reject' line (at least MIN_REJECTS) is
    rejected: by the schema, or for holding more than one document, which dimctl refuses and a
    schema, seeing one document at a time, cannot.
NOUN names the files in messages ("config", "workload"). Used by the config.schema and
sim.workload_schema tests. Exit 0 pass, 1 fail, 77 skipped (python3-jsonschema or python3-yaml
missing).

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
Yaml12Loader.add_constructor("tag:yaml.org,2002:bool",
                             lambda loader, node: loader.construct_scalar(node).lower() == "true")
Yaml12Loader.add_constructor("tag:yaml.org,2002:int",
                             lambda loader, node: int(loader.construct_scalar(node), 0))


def problems(validator, path):
    """Why dimctl's schema (or its one-document rule) refuses the file; empty when it does not."""
    with open(path, encoding="utf-8") as fh:
        docs = list(yaml.load_all(fh, Loader=Yaml12Loader))
    errors = [] if len(docs) <= 1 else ["(document): more than one document"]
    doc = docs[0] if docs else None
    for err in validator.iter_errors({} if doc is None else doc):
        where = "/".join(str(p) for p in err.absolute_path) or "(document)"
        errors.append(f"{where}: {err.message}")
    return errors


def main():
    if len(sys.argv) != 7:
        print(__doc__.splitlines()[2], file=sys.stderr)
        return 2
    schema_path, shipped, tests = (pathlib.Path(a) for a in (sys.argv[1], sys.argv[2], sys.argv[4]))
    min_shipped, min_rejects, noun = int(sys.argv[3]), int(sys.argv[5]), sys.argv[6]
    schema = json.loads(schema_path.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    failures = []

    shipped_files = sorted(shipped.rglob("*.yaml"))
    if len(shipped_files) < min_shipped:
        failures.append(f"{shipped}: {len(shipped_files)} {noun}s, expected at least {min_shipped}")
    for path in shipped_files + sorted((tests / "good").glob("*.yaml")):
        errors = problems(validator, path)
        failures += [f"{path}: {e}" for e in errors]
        print(f"{'ok  ' if not errors else 'FAIL'} accepted  {path.name}")

    rejects = 0
    for path in sorted((tests / "bad").glob("*.yaml")):
        if "# schema: reject" not in path.read_text().splitlines():
            continue
        rejects += 1
        errors = problems(validator, path)
        if not errors:
            failures.append(f"{path}: the schema accepts a {noun} dimctl refuses")
        print(f"{'ok  ' if errors else 'FAIL'} rejected  {path.name}"
              + (f"  ({errors[0][:100]})" if errors else ""))
    if rejects < min_rejects:
        failures.append(f"only {rejects} bad {noun}s are marked '# schema: reject' "
                        f"(want >= {min_rejects})")

    for f in failures:
        print("FAIL:", f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
