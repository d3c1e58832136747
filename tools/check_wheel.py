"""Check that a built wheel ships every file of the package: each module and each data file (task YAMLs,
templates, the world's data pack) that the source tree holds under the package's folders.

    python tools/check_wheel.py dist/agentworld-0.3.0-py3-none-any.whl [--source .]

The source's files are git's tracked files when the source is a git checkout (what a release is built
from), else every file under it. A file under ``core/``, ``plugins/``, ``mcp_server/`` or ``tasks/`` that the
wheel lacks is reported with the fix (a folder missing from ``[tool.setuptools] packages`` in
pyproject.toml, or a file pattern missing from ``[tool.setuptools.package-data]``); so is a file the wheel
ships that the source does not hold (a stale copy from an earlier build's build/ folder). Exit status 1 when
any is missing or extra; 0 and a one-line count otherwise. Used by .ci/run after ``python -m build`` and by
tests/test_release.py.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import zipfile
from pathlib import Path

PACKAGE = "agentworld"
SHIPPED_ROOTS = ("core", "plugins", "mcp_server", "tasks")  # the folders installed under agentworld/
TOP_FILES = ("__init__.py",)  # the package's own __init__ (the repository's top level is the package)
SKIP_PARTS = ("__pycache__",)
GENERATED = "_source.json"  # written by setup.py's build step (the commit built from), in no source tree


def source_files(source: Path) -> list[str]:
    """The files a release ships from, relative to ``source``, with '/' separators."""
    try:
        out = subprocess.run(["git", "-C", str(source), "ls-files", "-z"], capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        out = None
    if out is not None and out.returncode == 0 and out.stdout:
        names = [n for n in out.stdout.decode().split("\0") if n]
        return [n for n in names if (source / n).is_file()]  # a tracked file deleted in the work tree is not shipped
    return [p.relative_to(source).as_posix() for p in source.rglob("*") if p.is_file()]


def expected_in_wheel(files: list[str]) -> set[str]:
    keep = set()
    for name in files:
        parts = name.split("/")
        if any(p in SKIP_PARTS or p.endswith(".pyc") for p in parts):
            continue
        if parts[0] in SHIPPED_ROOTS or name in TOP_FILES:
            keep.add(f"{PACKAGE}/{name}")
    return keep


def _package_entries(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as zf:
        return {n for n in zf.namelist() if n.startswith(f"{PACKAGE}/") and not n.endswith("/")}


def missing_files(wheel: Path, source: Path) -> list[str]:
    return sorted(expected_in_wheel(source_files(source)) - _package_entries(wheel))


def extra_files(wheel: Path, source: Path) -> list[str]:
    """Files the wheel ships that the source does not hold (but the build's own record): a stale copy of a file
    deleted from the source, left in an earlier build's build/ folder, or a stray file picked up by a pattern."""
    return sorted(_package_entries(wheel) - expected_in_wheel(source_files(source)) - {f"{PACKAGE}/{GENERATED}"})


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("wheel", type=Path)
    ap.add_argument("--source", type=Path, default=Path(__file__).resolve().parents[1],
                    help="the source tree the wheel was built from (default: this checkout)")
    args = ap.parse_args(argv)
    if not args.wheel.is_file():
        print(f"check_wheel: no wheel at {args.wheel} (build one with `python -m build`)", file=sys.stderr)
        return 2
    missing = missing_files(args.wheel, args.source)
    extra = extra_files(args.wheel, args.source)
    if missing:
        folders = sorted({m.rsplit("/", 1)[0].replace("/", ".") for m in missing})
        print(f"check_wheel: {args.wheel.name} lacks {len(missing)} file(s) of the source:", file=sys.stderr)
        for m in missing[:40]:
            print(f"  {m}", file=sys.stderr)
        print("fix: list each of these packages in pyproject.toml's [tool.setuptools] packages and its files' "
              f"patterns in [tool.setuptools.package-data]: {', '.join(folders)}", file=sys.stderr)
    if extra:
        print(f"check_wheel: {args.wheel.name} ships {len(extra)} file(s) the source does not hold:", file=sys.stderr)
        for m in extra[:40]:
            print(f"  {m}", file=sys.stderr)
        print("fix: build from a clean tree (delete build/ and rebuild), or narrow the pattern in "
              "[tool.setuptools.package-data] that picked them up", file=sys.stderr)
    if missing or extra:
        return 1
    with zipfile.ZipFile(args.wheel) as zf:
        n = len(zf.namelist())
    print(f"check_wheel: {args.wheel.name} ships every package file of the source and nothing else ({n} entries)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
