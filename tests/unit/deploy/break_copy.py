#!/usr/bin/env python3
"""Writes a deliberately broken copy of a YAML or JSON file, for the checks to fail on.

  break_copy.py SRC DST set PATH JSON_VALUE    PATH's value becomes JSON_VALUE
  break_copy.py SRC DST delete PATH            PATH is removed
  break_copy.py SRC DST rename PATH NEW_KEY    PATH's key becomes NEW_KEY, value kept

PATH is dot-separated keys and list indices (spec.template.spec.containers.0.image), in the
file's first document. A PATH the file does not have is an error: a broken copy that breaks
nothing would let a check pass for the wrong reason.
"""
import json
import sys

import yaml


def main(src, dst, op, path, arg=None):
    is_json = src.endswith(".json")
    with open(src) as f:
        doc = json.load(f) if is_json else yaml.safe_load(f)
    *parents, last = path.split(".")
    node = doc
    for seg in parents:
        node = node[int(seg)] if isinstance(node, list) else node[seg]
    key = int(last) if isinstance(node, list) else last
    node[key]  # KeyError/IndexError: the path is not there
    if op == "set":
        node[key] = json.loads(arg)
    elif op == "delete":
        del node[key]
    elif op == "rename":
        # Same place in the mapping, so the copy differs from the original in the key alone.
        items = [(arg if k == key else k, v) for k, v in node.items()]
        node.clear()
        node.update(items)
    else:
        sys.exit(f"break_copy.py: unknown operation {op}")
    with open(dst, "w") as f:
        if is_json:
            json.dump(doc, f, indent=2)
        else:
            yaml.safe_dump(doc, f, sort_keys=False)


if __name__ == "__main__":
    if len(sys.argv) not in (5, 6):
        sys.exit(__doc__)
    main(*sys.argv[1:])
