"""The JSON schemas of every agentworld model and record, to compare two trees byte for byte.

A change of how a model is defined (a pydantic model that becomes a slotted dataclass with a ``TypeAdapter``
at the boundary, a field's default made another way) must leave every schema the project publishes or
validates with exactly as it was. This imports every module of the package, takes every class defined in it
that pydantic makes a schema of (``BaseModel`` subclasses and the engine's records, ``core/world/record.py``),
and writes ``{"module.Class": {"validation": ..., "serialization": ...}}`` as JSON (each schema as pydantic
writes it, ``json.dumps`` of ``TypeAdapter(cls).json_schema(mode=...)``, which is ``model_json_schema`` for a
model).

    python benchmarks/model_schemas.py --out before.json         # in one tree's environment
    python benchmarks/model_schemas.py --compare before.json     # in the other's: exit 1 on any difference

A class in ``before.json`` that is missing from the other tree, or whose schema differs, is a difference;
classes new in the other tree are listed, not counted.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import inspect
import json
import pkgutil
import sys
from typing import Any

from pydantic import BaseModel, TypeAdapter

PACKAGES = ("agentworld.core.", "agentworld.plugins.", "agentworld.mcp_server.")  # not setup.py, tests, tools


def _modules() -> list[Any]:
    import agentworld

    out = []
    for info in pkgutil.walk_packages(agentworld.__path__, "agentworld."):
        if not info.name.startswith(PACKAGES):
            continue
        try:
            out.append(importlib.import_module(info.name))
        except ImportError as e:  # an optional extra that is not installed: its models are not compared
            print(f"skipped {info.name}: {e}", file=sys.stderr)
    return out


def _is_record(cls: type) -> bool:
    from agentworld.core.world.record import Record

    return dataclasses.is_dataclass(cls) and issubclass(cls, Record)


def schemas() -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for mod in _modules():
        for name, cls in vars(mod).items():
            if not inspect.isclass(cls) or cls.__module__ != mod.__name__:
                continue
            if not ((issubclass(cls, BaseModel) and cls is not BaseModel and not cls.__pydantic_generic_metadata__["parameters"])
                    or _is_record_safe(cls)):
                continue
            adapter = TypeAdapter(cls)
            out[f"{mod.__name__}.{name}"] = {mode: _schema(adapter, mode) for mode in ("validation", "serialization")}
    return dict(sorted(out.items()))


def _schema(adapter: TypeAdapter, mode: Any) -> str:
    """The schema as JSON text, or the error pydantic gives for a class that has none (a callable field)."""
    try:
        return json.dumps(adapter.json_schema(mode=mode))
    except Exception as e:  # noqa: BLE001 - the error is the class's answer, compared like a schema
        return f"error: {type(e).__name__}: {str(e).splitlines()[0]}"


def _is_record_safe(cls: type) -> bool:
    try:
        return _is_record(cls)
    except ImportError:  # a tree before core/world/record.py
        return False


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    group = ap.add_mutually_exclusive_group(required=True)
    group.add_argument("--out", help="write the schemas to this JSON file")
    group.add_argument("--compare", help="compare with the schemas in this JSON file")
    args = ap.parse_args()
    now = schemas()
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(now, f, indent=1)
        print(f"{len(now)} classes' schemas written to {args.out}")
        return
    with open(args.compare, encoding="utf-8") as f:
        before = json.load(f)
    missing = [k for k in before if k not in now]
    changed = [k for k in before if k in now and before[k] != now[k]]
    new = [k for k in now if k not in before]
    for k in missing:
        print(f"missing: {k}")
    for k in changed:
        modes = [m for m in before[k] if before[k][m] != now[k].get(m)]
        print(f"changed: {k} ({', '.join(modes)})")
    if new:
        print(f"new (not compared): {', '.join(new)}")
    same = len(before) - len(missing) - len(changed)
    print(f"{same} of {len(before)} classes' schemas identical (validation and serialization modes)")
    sys.exit(1 if missing or changed else 0)


if __name__ == "__main__":
    main()
